// The chaos auditor on cancels: a cancel answered 202 must end the operation cancelled and
// show in its resource; one answered 409 found it finished and changed nothing, unless an
// earlier attempt of the same cancel went unanswered (it may have been the one that took).
import { describe, expect, it } from 'vitest';
import { audit } from '../../tools/chaos/auditor.js';
import { consistentWorld, input, resourceOf, stepKey, useAuditWorld, world } from './audit-world.js';

useAuditWorld();

describe('the chaos auditor, on cancels', () => {
  it('accepts a cancelled checkout that moved no money and kept no hold', async () => {
    const { ops, records } = consistentWorld();
    const cancelled = {
      key: 'cart-1',
      status: 'failed',
      cancelRequested: true,
      error: { code: 'cancelled', compensations: ['reverse_charge', 'release_reservation'] },
    };
    resourceOf(records, 'cart-1', cancelled);
    records.get('cart-1')!.cancel = { status: 202, step: 'charge_payment' };
    world.charges.set(stepKey('cart-1', 'charge'), { status: 'reversed', chargeId: 'ch_2', account: 'acc_a', amount: 700 });
    world.reservations.set(stepKey('cart-1', 'reserve'), { status: 'released', items: [{ sku: 'sku_a', quantity: 2 }] });
    world.accounts.set('acc_a', { id: 'acc_a', balance: 10_000 - 500 });
    world.inventory.set('sku_a', { sku: 'sku_a', available: 100, held: 0 });
    const { violations, outcomes } = await audit(input(ops, records));
    expect(violations).toEqual([]);
    expect(outcomes.byCode).toEqual({ cancelled: 1 });
  });

  it('when a cancelled operation kept its charge, or ended cancelled after a 409, or hid an accepted cancel, says so', async () => {
    const { ops, records } = consistentWorld();
    const cancelled = { key: 'cart-1', status: 'failed', cancelRequested: true, error: { code: 'cancelled', compensations: [] } };
    resourceOf(records, 'cart-1', cancelled);
    records.get('cart-1')!.cancel = { status: 409, code: 'operation_already_completed' };
    records.get('pay-1')!.cancel = { status: 202, step: 'charge_payment' };
    world.reservations.delete(stepKey('cart-1', 'reserve'));
    world.inventory.set('sku_a', { sku: 'sku_a', available: 100, held: 0 });
    const { violations } = await audit(input(ops, records));
    const cart = violations.filter((v) => v.key === 'cart-1').map((v) => v.rule);
    expect(cart).toContain('I1 money moves at most once');
    expect(cart).toContain('API: a finished operation is not changed by a cancel');
    expect(cart).toContain('API: only a cancel cancels');
    expect(violations).toContainEqual(expect.objectContaining({ rule: 'API: a cancel shows in the resource', key: 'pay-1' }));
  });

  it('accepts a 409 to a cancel whose earlier attempt got no answer, when the operation ended cancelled through it', async () => {
    const { ops, records } = consistentWorld();
    const cancelled = { key: 'cart-1', status: 'failed', cancelRequested: true, error: { code: 'cancelled', compensations: [] } };
    resourceOf(records, 'cart-1', cancelled);
    records.get('cart-1')!.cancel = { status: 409, code: 'operation_already_completed', unanswered: 1 };
    world.charges.set(stepKey('cart-1', 'charge'), { status: 'reversed', chargeId: 'ch_2', account: 'acc_a', amount: 700 });
    world.reservations.set(stepKey('cart-1', 'reserve'), { status: 'released', items: [{ sku: 'sku_a', quantity: 2 }] });
    world.accounts.set('acc_a', { id: 'acc_a', balance: 10_000 - 500 });
    world.inventory.set('sku_a', { sku: 'sku_a', available: 100, held: 0 });
    expect((await audit(input(ops, records))).violations).toEqual([]);

    // ...but not when the resource does not show that a cancel came through.
    const hidden = { ...cancelled, cancelRequested: undefined };
    resourceOf(records, 'cart-1', hidden);
    const { violations } = await audit(input(ops, records));
    expect(violations).toEqual([expect.objectContaining({ rule: 'API: a cancel shows in the resource', key: 'cart-1' })]);
  });

  it('when a cancel was answered 202, an operation that still succeeded or failed otherwise breaks the cancel rule', async () => {
    const { ops, records } = consistentWorld();
    records.get('pay-1')!.cancel = { status: 202, step: 'charge_payment' };
    resourceOf(records, 'pay-1', { key: 'pay-1', status: 'succeeded', cancelRequested: true, result: { chargeId: 'ch_1' } });
    records.get('cart-1')!.cancel = { status: 202, step: null };
    const refused = {
      key: 'cart-1',
      status: 'failed',
      cancelRequested: true,
      error: { code: 'out_of_stock', compensations: [] },
    };
    resourceOf(records, 'cart-1', refused);
    world.charges.delete(stepKey('cart-1', 'charge'));
    world.reservations.delete(stepKey('cart-1', 'reserve'));
    world.accounts.set('acc_a', { id: 'acc_a', balance: 10_000 - 500 });
    world.inventory.set('sku_a', { sku: 'sku_a', available: 100, held: 0 });
    const { violations } = await audit(input(ops, records));
    const broken = violations.filter((v) => v.rule === 'API: a cancel answered 202 ends cancelled');
    expect(broken).toEqual([
      expect.objectContaining({
        key: 'pay-1',
        message: 'a cancel was answered 202 at step charge_payment, yet the operation succeeded',
      }),
      expect.objectContaining({
        key: 'cart-1',
        message: 'a cancel was answered 202 before the first step, yet the operation failed with out_of_stock',
      }),
    ]);
  });
});
