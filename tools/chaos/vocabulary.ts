// What the chaos run knows about the sandboxes, as opposed to the operations: which request
// fields name an account (money leaves `account` and `from`, arrives at `to`), an amount,
// a currency, a SKU and a quantity; which accounts and SKUs are ample, tight or doomed; and
// how the ledgers read (a charge takes money from its account, a credit gives money to
// its account, a reservation holds or keeps items). The planner fills any definition's
// request schema from it and the auditor reads any step's effect through it, so a new
// operation against the bank or the reservation service is planned and audited without a
// line here. Nothing in this file names an operation type, a step or a compensation.

export const AMPLE_ACCOUNTS = ['acc_chaos_1', 'acc_chaos_2', 'acc_chaos_3'] as const;
export const AMPLE_SKUS = ['sku_chaos_a', 'sku_chaos_b', 'sku_chaos_c'] as const;
/** Enough for a few operations only: later ones fail with insufficient_funds, whichever wins. */
const TIGHT_ACCOUNT = 'acc_chaos_tight';
/** Can pay nothing the plan asks of it: designed to fail. */
const POOR_ACCOUNT = 'acc_chaos_poor';
/** A few units: later checkouts fail with out_of_stock. */
const SCARCE_SKU = 'sku_chaos_scarce';
/** None at all: designed to fail. */
const SOLD_OUT_SKU = 'sku_chaos_soldout';
/** An account the bank has never opened: money sent to it is refused. */
export const MISSING_ACCOUNT = 'acc_chaos_missing';

/** Ledger set-up: generous accounts and stock so most operations succeed, and some that cannot. */
export const LEDGER = {
  accounts: [
    ...AMPLE_ACCOUNTS.map((id) => ({ id, balance: 1_000_000_000 })),
    { id: TIGHT_ACCOUNT, balance: 30_000 },
    { id: POOR_ACCOUNT, balance: 50 },
  ],
  stock: [
    ...AMPLE_SKUS.map((sku) => ({ sku, available: 1_000_000 })),
    { sku: SCARCE_SKU, available: 12 },
    { sku: SOLD_OUT_SKU, available: 0 },
  ],
  currency: 'EUR',
} as const;

/** The request fields the sandboxes' calls are built from, by what they mean. */
export const FIELDS = {
  /** The account money leaves (charged, debited). */
  payers: ['account', 'from'],
  /** The account money arrives at (credited). */
  payees: ['to'],
  amount: 'amount',
  currency: 'currency',
  /** Inside the objects of an array of items. */
  sku: 'sku',
  quantity: 'quantity',
} as const;

/** What a field of a request stands for, by its name. */
export type FieldRole = 'payer' | 'payee' | 'amount' | 'currency';

export function roleOf(field: string): FieldRole | undefined {
  if ((FIELDS.payers as readonly string[]).includes(field)) return 'payer';
  if ((FIELDS.payees as readonly string[]).includes(field)) return 'payee';
  if (field === FIELDS.amount) return 'amount';
  if (field === FIELDS.currency) return 'currency';
  return undefined;
}

/**
 * A value that makes an operation fail, or may: an account or a SKU in place of an ample
 * one. `refusal` is the downstream problem code it meets (the definition's businessErrors
 * map it to the operation's code); without one, whether it fails depends on who wins.
 */
export interface Spoil {
  role: 'payer' | 'payee' | 'sku';
  value: string;
  /** The amount drawn for it (a payer that can afford a few, or none). */
  amount?: readonly [number, number];
  /** The quantity drawn for it (a SKU with a few units, or none). */
  quantity?: readonly [number, number];
  refusal?: string;
}

/** May fail (insufficient_funds / out_of_stock) depending on who wins the race for the little there is. */
export const TIGHT_SPOILS: readonly Spoil[] = [
  { role: 'payer', value: TIGHT_ACCOUNT, amount: [2_000, 6_000] },
  { role: 'sku', value: SCARCE_SKU, quantity: [1, 3] },
];

/** Must fail: the auditor flags one that succeeds. */
export const DOOMED_SPOILS: readonly Spoil[] = [
  // The charge or debit is declined; earlier steps are compensated.
  { role: 'payer', value: POOR_ACCOUNT, amount: [1_000, 5_000], refusal: 'insufficient_funds' },
  // The credit is refused; the debit before it is reversed.
  { role: 'payee', value: MISSING_ACCOUNT, refusal: 'account_not_found' },
  // The hold is refused: nothing else runs.
  { role: 'sku', value: SOLD_OUT_SKU, quantity: [1, 2], refusal: 'out_of_stock' },
];

/** How the auditor reads a step's effect row: money taken from or given to an account, or items held. */
export type EffectKind = { kind: 'money'; direction: 'out' | 'in' } | { kind: 'stock' };

/** The sandboxes' ledgers by service and effect path, as the definitions' `effect` names them. */
const EFFECTS: Record<string, EffectKind> = {
  'bank /charges/{key}': { kind: 'money', direction: 'out' },
  'bank /credits/{key}': { kind: 'money', direction: 'in' },
  'reservations /reservations/{key}': { kind: 'stock' },
};

export function effectKindOf(service: string, path: string): EffectKind | undefined {
  return EFFECTS[`${service} ${path}`];
}

/** The sandboxes the chaos stack runs, by the service name steps use. */
export type Service = 'bank' | 'reservations';
export const SERVICES: readonly Service[] = ['bank', 'reservations'];

export function isService(name: string): name is Service {
  return (SERVICES as readonly string[]).includes(name);
}

export interface Item {
  sku: string;
  quantity: number;
}

/** The money a request moves, read through the vocabulary: who pays, who receives, how much. */
export function moneyOf(body: Record<string, unknown>): { payers: string[]; payees: string[]; amount: number } {
  const payers: string[] = [];
  const payees: string[] = [];
  for (const [field, value] of Object.entries(body)) {
    const role = roleOf(field);
    if (role === 'payer' && typeof value === 'string') payers.push(value);
    if (role === 'payee' && typeof value === 'string') payees.push(value);
  }
  const amount = typeof body[FIELDS.amount] === 'number' ? (body[FIELDS.amount] as number) : 0;
  return { payers, payees, amount };
}

/** The items a request holds: those of its arrays of objects with a SKU (empty when it holds none). */
export function itemsOf(body: Record<string, unknown>): Item[] {
  for (const value of Object.values(body)) {
    if (!Array.isArray(value) || value.length === 0) continue;
    const first = value[0] as Record<string, unknown> | null;
    if (first && typeof first === 'object' && FIELDS.sku in first) return value as Item[];
  }
  return [];
}
