// The chaos auditor must be able to fail: fed ledgers and operation resources that break
// each invariant (served over real HTTP by small stand-ins), it names the invariant and
// the key; fed a consistent world, it finds nothing. It reads every operation through its
// definition's steps: a payment's charge, a checkout's hold and charge.
import { describe, expect, it } from 'vitest';
import { audit } from '../../tools/chaos/auditor.js';
import { outcomeSignature } from '../../tools/chaos/records.js';
import { consistentWorld, input, resourceOf, stepKey, useAuditWorld, world } from './audit-world.js';

useAuditWorld();

describe('the chaos auditor', () => {
  it('finds nothing wrong in a consistent world', async () => {
    const { ops, records } = consistentWorld();
    const result = await audit(input(ops, records));
    expect(result.violations).toEqual([]);
    expect(result.outcomes).toMatchObject({ succeeded: 2, failed: 0, open: 0 });
    expect(result.conservation.accounts).toEqual([
      { id: 'acc_a', initial: 10_000, final: 8_800, charged: 1_200, credited: 0, netCharged: 1_200, succeeded: 1_200 },
    ]);
    expect(result.conservation.money).toEqual({ fell: 1_200, chargedOut: 1_200, movedBetweenAccounts: 0 });
  });

  it('when a retry charged a second time under another key, reports the money no operation explains', async () => {
    const { ops, records } = consistentWorld();
    world.accounts.set('acc_a', { id: 'acc_a', balance: 10_000 - 1_200 - 500 });
    const { violations } = await audit(input(ops, records));
    expect(violations).toEqual([
      expect.objectContaining({
        rule: 'conservation of money',
        message: expect.stringContaining('(500 charged that no succeeded operation explains)'),
      }),
      expect.objectContaining({
        rule: 'conservation of money',
        message: expect.stringContaining('all accounts together fell by 1700; succeeded operations charged 1200 out of them'),
      }),
    ]);
  });

  it('when a succeeded payment has no charge under its key, reports invariant 1 with the key', async () => {
    const { ops, records } = consistentWorld();
    world.charges.delete(stepKey('pay-1', 'charge'));
    world.accounts.set('acc_a', { id: 'acc_a', balance: 10_000 - 700 });
    const { violations } = await audit(input(ops, records));
    expect(violations).toContainEqual(expect.objectContaining({ rule: 'I1 money moves at most once', key: 'pay-1' }));
  });

  it('when a failed checkout left money charged and its hold held, reports invariants 1 and 2', async () => {
    const { ops, records } = consistentWorld();
    const failed = {
      key: 'cart-1',
      status: 'failed',
      error: { code: 'payment_unavailable', compensations: ['reverse_charge', 'release_reservation'] },
    };
    resourceOf(records, 'cart-1', failed);
    world.reservations.set(stepKey('cart-1', 'reserve'), {
      status: 'held',
      reservationId: 'rs_1',
      items: [{ sku: 'sku_a', quantity: 2 }],
    });
    world.inventory.set('sku_a', { sku: 'sku_a', available: 98, held: 2 });
    const { violations } = await audit(input(ops, records));
    const rules = violations.filter((v) => v.key === 'cart-1').map((v) => v.rule);
    expect(rules).toContain('I1 money moves at most once');
    expect(rules).toContain('I2 reservations');
    expect(violations).toContainEqual(
      expect.objectContaining({ rule: 'I2 reservations', message: expect.stringContaining('still held at the end') }),
    );
  });

  it('when the two API instances (or a client) saw different outcomes, reports invariant 4', async () => {
    const { ops, records } = consistentWorld();
    world.api[1].set('pay-1', { key: 'pay-1', status: 'failed', error: { code: 'insufficient_funds', compensations: [] } });
    records.get('cart-1')!.outcomes.push({ via: 'api-1 late retry', signature: outcomeSignature({ status: 'failed' }) });
    const { violations } = await audit(input(ops, records));
    expect(
      violations
        .filter((v) => v.rule === 'I4 same outcome through any instance')
        .map((v) => v.key)
        .sort(),
    ).toEqual(['cart-1', 'pay-1']);
  });

  it('when an accepted operation cannot be found, or is still open without NeedsAttention, reports invariants 5 and 3', async () => {
    const { ops, records } = consistentWorld();
    world.api[0].delete('pay-1');
    world.api[1].delete('pay-1');
    const open = { key: 'cart-1', status: 'processing', step: 'charge_payment' };
    world.api[0].set('cart-1', open);
    world.api[1].set('cart-1', { ...open });
    const { violations, outcomes } = await audit(input(ops, records));
    expect(violations).toContainEqual(expect.objectContaining({ rule: 'I5 nothing lost', key: 'pay-1' }));
    expect(violations).toContainEqual(expect.objectContaining({ rule: 'I3 every operation ends', key: 'cart-1' }));
    expect(outcomes.open).toBe(1);
  });

  it('accepts an operation still compensating when it carries NeedsAttention', async () => {
    const { ops, records } = consistentWorld();
    const open = { key: 'cart-1', status: 'processing', step: 'charge_payment', needsAttention: true };
    world.api[0].set('cart-1', open);
    world.api[1].set('cart-1', { ...open });
    world.reservations.set(stepKey('cart-1', 'reserve'), {
      status: 'held',
      reservationId: 'rs_1',
      items: [{ sku: 'sku_a', quantity: 2 }],
    });
    world.inventory.set('sku_a', { sku: 'sku_a', available: 98, held: 2 });
    const { violations, outcomes } = await audit(input(ops, records));
    expect(violations).toEqual([]);
    expect(outcomes).toMatchObject({ openNeedsAttention: 1, needsAttention: 1, open: 0 });
  });
});
