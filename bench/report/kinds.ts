// What the report knows about each kind of scenario, in one place: its label, the
// processes that do its work, and which columns of the per-process table apply to it.
// retrysafe's operations are listed once with the workflows they are measured against;
// the sections loop over that list rather than naming payment and checkout themselves.
import type { RatioRow } from '../results.js';
import type { Kind, ScenarioResult } from '../scenarios/measure.js';
import { cpuPerOp } from './format.js';

/** Which process is the worker, and which answered the HTTP requests, in the per-process usage table. */
interface UsageColumns {
  worker: 'worker' | 'baselineWorker';
  api: 'api' | 'apiNoCache' | 'plain';
  /** The requests went through retrysafe's API, so its Temporal RPCs per operation mean something. */
  apiRpcs: boolean;
}

interface KindFacts {
  label: string;
  /** The processes that do its work (the bench process, the driver, is shown apart unless it is the client). */
  parts?: readonly string[];
  /** Its columns in the per-process usage table; absent for a peer's scenarios, whose processes are not ours. */
  usage?: UsageColumns;
}

const OURS = ['api', 'worker', 'temporal', 'bank', 'reservations'] as const;
const BARE = ['baselineWorker', 'temporal', 'orchestrator'] as const;
const viaApi: UsageColumns = { worker: 'worker', api: 'api', apiRpcs: true };
const noApi: UsageColumns = { worker: 'worker', api: 'api', apiRpcs: false };
const bare: UsageColumns = { worker: 'baselineWorker', api: 'api', apiRpcs: false };

export const KINDS: Record<Kind, KindFacts> = {
  payment: { label: 'payment', parts: OURS, usage: viaApi },
  checkout: { label: 'checkout', parts: OURS, usage: viaApi },
  bare1: { label: 'bare, 1 activity', parts: BARE, usage: bare },
  bare3: { label: 'bare, 3 activities', parts: BARE, usage: bare },
  'payment-direct': { label: 'payment, no API', usage: noApi },
  'checkout-direct': { label: 'checkout, no API', usage: noApi },
  'bare1-tracked': { label: 'bare 1 + bookkeeping', usage: bare },
  'bare3-tracked': { label: 'bare 3 + bookkeeping', usage: bare },
  replay: { label: 'replay (cached)', usage: viaApi },
  'replay-uncached': { label: 'replay (no cache)', usage: { ...viaApi, api: 'apiNoCache' } },
  plain: { label: 'plain endpoint', usage: { ...noApi, api: 'plain' } },
  restate: { label: 'checkout on Restate', parts: ['restate-server', 'restate-service', 'bank', 'reservations'] },
  dbos: { label: 'checkout on DBOS', parts: ['postgres', 'dbos-service', 'bank', 'reservations'] },
  'replay-checkout': { label: 'checkout replay (cached)', usage: viaApi },
  'replay-restate': { label: 'checkout replay on Restate' },
  'replay-dbos': { label: 'checkout replay on DBOS' },
};

/** A kind's label; a name the report does not know (an older run's) reads as itself. */
export const label = (k: string) => (Object.hasOwn(KINDS, k) ? KINDS[k as Kind].label : k);

/** The peer engines whose checkout the report can show beside ours. */
export const PEER_ENGINES: readonly Kind[] = ['restate', 'dbos'];

/** Process names as a reader knows them; a name not listed reads as itself. */
const PART_LABEL: Record<string, string> = {
  orchestrator: 'bench (Temporal client)',
  baselineWorker: 'worker',
  postgres: 'PostgreSQL',
};
export const partLabel = (p: string) => PART_LABEL[p] ?? p;

/** CPU ms per operation of each process that does `s`'s work, and their sum. */
export function systemCpu(s: ScenarioResult): { total: number; parts: Array<[string, number]> } {
  const parts = (KINDS[s.kind].parts ?? []).map((p): [string, number] => [p, cpuPerOp(s, p)]);
  return { total: parts.reduce((a, [, v]) => a + (Number.isFinite(v) ? v : 0), 0), parts };
}

/** One of retrysafe's operations and the workflows it is measured against, each a scenario kind. */
export interface Operation {
  own: Kind;
  /** The bare workflow with as many no-op activities as the operation has steps. */
  bare: Kind;
  activities: number;
  /** The bare workflow plus exactly retrysafe's bookkeeping. */
  tracked: Kind;
  /** retrysafe's workflow started by a Temporal client, without the API. */
  direct: Kind;
  /** Its columns in a row of the run's ratios. */
  ratios: { r1: keyof RatioRow; r1Wall: keyof RatioRow; r2p50: keyof RatioRow; r2p99: keyof RatioRow };
}

export const PAYMENT: Operation = {
  own: 'payment',
  bare: 'bare1',
  activities: 1,
  tracked: 'bare1-tracked',
  direct: 'payment-direct',
  ratios: { r1: 'r1Payment', r1Wall: 'r1PaymentWall', r2p50: 'r2PaymentP50', r2p99: 'r2PaymentP99' },
};

export const CHECKOUT: Operation = {
  own: 'checkout',
  bare: 'bare3',
  activities: 3,
  tracked: 'bare3-tracked',
  direct: 'checkout-direct',
  ratios: { r1: 'r1Checkout', r1Wall: 'r1CheckoutWall', r2p50: 'r2CheckoutP50', r2p99: 'r2CheckoutP99' },
};

/** retrysafe's operations, in the order the report shows them. */
export const OPERATIONS: readonly Operation[] = [PAYMENT, CHECKOUT];
