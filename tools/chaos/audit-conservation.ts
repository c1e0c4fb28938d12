// The global checks of a chaos audit: money and stock are conserved. Every change of a
// balance or a stock must be explained by the rows under the operations' own keys (a
// charge under any other key shows up here), and, once no operation is left compensating,
// by what the succeeded operations asked for.
import type { Violation } from './records.js';

export interface Conservation {
  /**
   * Per account, from the rows under the operations' keys: charged (taken from it) and
   * credited (given to it), netCharged their difference; succeeded: what the operations
   * the API says succeeded take from it net (a transfer's payee gets its amount back).
   */
  accounts: Array<{
    id: string;
    initial: number;
    final: number;
    charged: number;
    credited: number;
    netCharged: number;
    succeeded: number;
  }>;
  /**
   * All accounts together: how much they fell; what succeeded operations charged out of
   * them (money that went to no account: payments, checkouts); what succeeded operations
   * moved between them (transfers), which changes no total.
   */
  money: { fell: number; chargedOut: number; movedBetweenAccounts: number };
  skus: Array<{
    sku: string;
    initial: number;
    available: number;
    held: number;
    confirmedByOps: number;
    heldByOps: number;
    succeeded: number;
  }>;
}

/** What the run starts from, as the sandboxes said when it set them up: balances by account, stock by SKU. */
export interface InitialLedgers {
  initialBalances: Record<string, number>;
  initialStock: Record<string, number>;
}

/** What the audit of each operation adds up, per account and per SKU. */
export class LedgerTally {
  /** In force under the operations' keys. */
  readonly chargedByAccount = new Map<string, number>();
  readonly creditedByAccount = new Map<string, number>();
  readonly confirmedBySku = new Map<string, number>();
  readonly heldBySku = new Map<string, number>();
  /** What the succeeded operations asked for. */
  readonly succeededByAccount = new Map<string, number>();
  readonly succeededBySku = new Map<string, number>();
  readonly money = { chargedOut: 0, movedBetweenAccounts: 0 };

  add(m: Map<string, number>, k: string, n: number): void {
    m.set(k, (m.get(k) ?? 0) + n);
  }
}

export interface ConservationInput extends InitialLedgers {
  bankUrl: string;
  reservationsUrl: string;
  /** A GET of a sandbox's row. */
  read(url: string): Promise<{ body: Record<string, unknown> }>;
  /** No operation is still compensating (NeedsAttention): it may hold money its outcome will return. */
  settled: boolean;
}

export async function checkConservation(
  tally: LedgerTally,
  input: ConservationInput,
  violations: Violation[],
): Promise<Conservation> {
  const { settled } = input;
  const accounts: Conservation['accounts'] = [];
  for (const [id, initial] of Object.entries(input.initialBalances)) {
    const res = await input.read(`${input.bankUrl}/accounts/${encodeURIComponent(id)}`);
    const final = Number(res.body.balance);
    const charged = tally.chargedByAccount.get(id) ?? 0;
    const credited = tally.creditedByAccount.get(id) ?? 0;
    const netCharged = charged - credited;
    const succeeded = tally.succeededByAccount.get(id) ?? 0;
    accounts.push({ id, initial, final, charged, credited, netCharged, succeeded });
    if (initial - final !== netCharged || (netCharged !== succeeded && settled)) {
      violations.push({
        rule: 'conservation of money',
        message:
          `${id}: balance fell by ${initial - final}; the operations' keys hold ${charged} charged and ${credited} credited, ` +
          `${netCharged} net; succeeded operations account for ${succeeded}` +
          (initial - final > succeeded ? ` (${initial - final - succeeded} charged that no succeeded operation explains)` : ''),
      });
    }
  }
  const fell = accounts.reduce((sum, a) => sum + a.initial - a.final, 0);
  if (fell !== tally.money.chargedOut && settled) {
    violations.push({
      rule: 'conservation of money',
      message:
        `all accounts together fell by ${fell}; succeeded operations charged ${tally.money.chargedOut} out of them ` +
        `(and moved ${tally.money.movedBetweenAccounts} between them, which changes no total)`,
    });
  }
  const skus: Conservation['skus'] = [];
  for (const [sku, initial] of Object.entries(input.initialStock)) {
    const res = await input.read(`${input.reservationsUrl}/inventory/${encodeURIComponent(sku)}`);
    const available = Number(res.body.available);
    const held = Number(res.body.held);
    const confirmedByOps = tally.confirmedBySku.get(sku) ?? 0;
    const heldByOps = tally.heldBySku.get(sku) ?? 0;
    const succeeded = tally.succeededBySku.get(sku) ?? 0;
    skus.push({ sku, initial, available, held, confirmedByOps, heldByOps, succeeded });
    if (initial - available !== confirmedByOps + heldByOps || (confirmedByOps !== succeeded && settled)) {
      violations.push({
        rule: 'conservation of stock',
        message:
          `${sku}: available fell by ${initial - available}; confirmed ${confirmedByOps} + held ${heldByOps} ` +
          `by the operations' keys; succeeded operations account for ${succeeded}`,
      });
    }
    if (held !== heldByOps)
      violations.push({ rule: 'conservation of stock', message: `${sku}: ${held} held, the operations' keys hold ${heldByOps}` });
    if (held > 0 && settled) {
      violations.push({
        rule: 'I2 reservations',
        message: `${sku}: ${held} still held at the end, with every operation finished`,
      });
    }
  }
  return { accounts, money: { fell, ...tally.money }, skus };
}
