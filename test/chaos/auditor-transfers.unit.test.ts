// The chaos auditor on transfers: money that moves between two accounts (a debit under
// one key, a credit under another) changes no total, and a credit without its debit, to
// another account, or kept after the debit was reversed, is invariant 1 broken. The codes
// a transfer may fail with come from its definition in the catalog.
import { describe, expect, it } from 'vitest';
import { audit } from '../../tools/chaos/auditor.js';
import { input, resourceOf, stepKey, useAuditWorld, withTransfer, world } from './audit-world.js';

useAuditWorld();

/** Invariant 1 broken by the transfer, as the auditor words it. */
const moneyMovedTwice = (message: string) =>
  expect.objectContaining({ rule: 'I1 money moves at most once', key: 'move-1', message });

describe('the chaos auditor, on transfers', () => {
  it('accepts a transfer that debited one account and credited another: money moved, none charged out', async () => {
    const { ops, records, balances } = withTransfer();
    const result = await audit(input(ops, records, balances));
    expect(result.violations).toEqual([]);
    expect(result.outcomes.byType).toEqual({
      payment: { succeeded: 1, failed: 0 },
      checkout: { succeeded: 1, failed: 0 },
      transfer: { succeeded: 1, failed: 0 },
    });
    expect(result.conservation.accounts).toEqual([
      { id: 'acc_a', initial: 10_000, final: 8_500, charged: 1_500, credited: 0, netCharged: 1_500, succeeded: 1_500 },
      { id: 'acc_b', initial: 5_000, final: 5_300, charged: 0, credited: 300, netCharged: -300, succeeded: -300 },
    ]);
    expect(result.conservation.money).toEqual({ fell: 1_200, chargedOut: 1_200, movedBetweenAccounts: 300 });
  });

  it('when a succeeded transfer credited without a debit, reports invariant 1 and the money it made', async () => {
    const { ops, records, balances } = withTransfer();
    world.charges.delete(stepKey('move-1', 'debit'));
    world.accounts.set('acc_a', { id: 'acc_a', balance: 10_000 - 1_200 });
    const { violations } = await audit(input(ops, records, balances));
    expect(violations).toContainEqual(moneyMovedTwice('succeeded, but debit_source is none at the bank'));
    expect(violations).toContainEqual(
      expect.objectContaining({
        rule: 'conservation of money',
        message: expect.stringContaining('all accounts together fell by 900'),
      }),
    );
  });

  it('when a transfer credited another account than asked, or its result names another debit, reports invariant 1', async () => {
    const { ops, records, balances } = withTransfer();
    world.credits.set(stepKey('move-1', 'credit'), { status: 'credited', creditId: 'cr_9', account: 'acc_a', amount: 300 });
    resourceOf(records, 'move-1', { key: 'move-1', status: 'succeeded', result: { debitId: 'ch_other', creditId: 'cr_9' } });
    const { violations } = await audit(input(ops, records, balances));
    const move = violations.filter((v) => v.key === 'move-1');
    expect(move).toContainEqual(moneyMovedTwice('credit_destination: the bank moved 300 to acc_a; the request was 300 to acc_b'));
    expect(move).toContainEqual(expect.objectContaining({ message: expect.stringContaining('result.debitId ch_other') }));
  });

  it('when a failed transfer kept its credit after reversing its debit, reports invariant 1 and the account it fed', async () => {
    const { ops, records, balances } = withTransfer();
    resourceOf(records, 'move-1', {
      key: 'move-1',
      status: 'failed',
      error: { code: 'transfer_unavailable', compensations: ['reverse_credit', 'reverse_debit'] },
    });
    world.charges.set(stepKey('move-1', 'debit'), { status: 'reversed', chargeId: 'ch_9', account: 'acc_a', amount: 300 });
    world.accounts.set('acc_a', { id: 'acc_a', balance: 10_000 - 1_200 });
    const { violations } = await audit(input(ops, records, balances));
    expect(violations).toContainEqual(moneyMovedTwice('failed (transfer_unavailable), but credit_destination is credited'));
    expect(violations).toContainEqual(
      expect.objectContaining({ rule: 'conservation of money', message: expect.stringMatching(/^acc_b: balance fell by -300/) }),
    );
  });

  it("knows the failure codes from the catalog: a transfer's destination_not_found is one, an invented code is not", async () => {
    const { ops, records, balances } = withTransfer();
    const refused = { code: 'destination_not_found', compensations: ['reverse_debit'] };
    resourceOf(records, 'move-1', { key: 'move-1', status: 'failed', error: refused });
    world.charges.set(stepKey('move-1', 'debit'), { status: 'reversed', chargeId: 'ch_9', account: 'acc_a', amount: 300 });
    world.credits.delete(stepKey('move-1', 'credit'));
    world.accounts.set('acc_a', { id: 'acc_a', balance: 10_000 - 1_200 });
    world.accounts.set('acc_b', { id: 'acc_b', balance: 5_000 });
    // Planned to succeed (ample accounts), it could not have been refused: the plan's own check.
    expect((await audit(input(ops, records, balances))).violations).toEqual([
      expect.objectContaining({ rule: 'plan: designed to succeed', key: 'move-1' }),
    ]);
    ops.at(-1)!.profile = 'doomed';
    ops.at(-1)!.expectedFailure = ['destination_not_found', 'account_not_found', 'transfer_unavailable'];
    expect((await audit(input(ops, records, balances))).violations).toEqual([]);

    resourceOf(records, 'move-1', { key: 'move-1', status: 'failed', error: { ...refused, code: 'destination_gone' } });
    const { violations } = await audit(input(ops, records, balances));
    expect(violations.map((v) => v.rule)).toEqual(['API: stable error codes', 'plan: designed to fail']);
  });
});
