// What the report knows about each kind of scenario, in one place: its label, the
// processes that do its work, and which columns of the per-process table apply to it; and
// the operation types a run measured with the workflows each is measured against (kept
// in the results, so the report names no type itself). The sections loop over that list.
import { PEER_NAMES } from '../peers/index.js';
import { find, type OperationRatios, type RatioRow } from '../results.js';
import type { OperationKinds } from '../scenarios/kinds.js';
import type { Kind, ScenarioResult } from '../scenarios/measure.js';
import { activities, cpuPerOp } from './format.js';

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
/** Bare Temporal making the operation's calls: its worker, the server, the sandboxes it calls, and its client. */
const FAIR = ['baselineWorker', 'temporal', 'bank', 'reservations', 'orchestrator'] as const;
const viaApi: UsageColumns = { worker: 'worker', api: 'api', apiRpcs: true };
const noApi: UsageColumns = { worker: 'worker', api: 'api', apiRpcs: false };
const bare: UsageColumns = { worker: 'baselineWorker', api: 'api', apiRpcs: false };

/** The kinds that are not named after an operation type. */
const FIXED: Record<string, KindFacts> = {
  replay: { label: 'replay (cached)', usage: viaApi },
  'replay-uncached': { label: 'replay (no cache)', usage: { ...viaApi, api: 'apiNoCache' } },
  plain: { label: 'plain endpoint', usage: { ...noApi, api: 'plain' } },
  restate: { label: 'checkout on Restate', parts: ['restate-server', 'restate-service', 'bank', 'reservations'] },
  dbos: { label: 'checkout on DBOS', parts: ['postgres', 'dbos-service', 'bank', 'reservations'] },
  'replay-restate': { label: 'checkout replay on Restate' },
  'replay-dbos': { label: 'checkout replay on DBOS' },
};

/** What the report knows about `kind` (tools/bench/scenarios/kinds.ts names them); any other name is an operation type's own. */
export function kindFacts(kind: Kind): KindFacts {
  if (Object.hasOwn(FIXED, kind)) return FIXED[kind]!;
  let m = /^bare(\d+)$/.exec(kind);
  if (m) return { label: `bare, ${activities(Number(m[1]))}`, parts: BARE, usage: bare };
  m = /^bare(\d+)-tracked$/.exec(kind);
  if (m) return { label: `bare ${m[1]} + bookkeeping`, usage: bare };
  m = /^bare-http-(.+)$/.exec(kind);
  if (m) return { label: `bare + ${m[1]}'s HTTP calls`, parts: FAIR, usage: bare };
  m = /^(.+)-direct$/.exec(kind);
  if (m) return { label: `${m[1]}, no API`, usage: noApi };
  m = /^replay-(.+)$/.exec(kind);
  if (m) return { label: `${m[1]} replay (cached)`, usage: viaApi };
  return { label: kind, parts: OURS, usage: viaApi };
}

/** A kind's label. */
export const label = (k: string) => kindFacts(k).label;

/** The peer engines whose checkout the report can show beside ours. */
export const PEER_ENGINES: readonly Kind[] = PEER_NAMES;

/** Process names as a reader knows them; a name not listed reads as itself. */
const PART_LABEL: Record<string, string> = {
  orchestrator: 'bench (Temporal client)',
  baselineWorker: 'worker',
  postgres: 'PostgreSQL',
};
export const partLabel = (p: string) => PART_LABEL[p] ?? p;

/** CPU ms per operation of each process that does a scenario's work, and their sum. */
export interface SystemCpu {
  total: number;
  parts: Array<[string, number]>;
}

export function systemCpu(s: ScenarioResult): SystemCpu {
  const parts = (kindFacts(s.kind).parts ?? []).map((p): [string, number] => [p, cpuPerOp(s, p)]);
  return { total: parts.reduce((a, [, v]) => a + (Number.isFinite(v) ? v : 0), 0), parts };
}

/**
 * A table's rows, one per kind and concurrency (`outer` says which loops outermost), each
 * opened by the kind's label and c, then `cells` of the kind's scenario at c (undefined:
 * not in the run) and the CPU of the processes that did its work.
 */
export function kindRows(
  scenarios: ScenarioResult[],
  kinds: readonly Kind[],
  cs: readonly number[],
  outer: 'kind' | 'c',
  cells: (s: ScenarioResult | undefined, cpu: SystemCpu | undefined, kind: Kind) => Array<string | number>,
): Array<Array<string | number>> {
  const pairs =
    outer === 'kind'
      ? kinds.flatMap((k) => cs.map((c) => [k, c] as const))
      : cs.flatMap((c) => kinds.map((k) => [k, c] as const));
  return pairs.map(([k, c]) => {
    const s = find(scenarios, k, c);
    return [label(k), c, ...cells(s, s ? systemCpu(s) : undefined, k)];
  });
}

/** One of retrysafe's operations and the workflows it is measured against, each a scenario kind. */
export type Operation = OperationKinds;

/**
 * Runs recorded before the results named their operations measured these two, each
 * against its no-op baseline only, and kept their ratios in named fields.
 */
const LEGACY: ReadonlyArray<
  Operation & { fields: Record<keyof Pick<OperationRatios, 'r1' | 'r1Wall' | 'r2p50' | 'r2p99'>, keyof RatioRow> }
> = [
  {
    own: 'payment',
    bare: 'bare1',
    activities: 1,
    tracked: 'bare1-tracked',
    direct: 'payment-direct',
    fields: { r1: 'r1Payment', r1Wall: 'r1PaymentWall', r2p50: 'r2PaymentP50', r2p99: 'r2PaymentP99' },
  },
  {
    own: 'checkout',
    bare: 'bare3',
    activities: 3,
    tracked: 'bare3-tracked',
    direct: 'checkout-direct',
    fields: { r1: 'r1Checkout', r1Wall: 'r1CheckoutWall', r2p50: 'r2CheckoutP50', r2p99: 'r2CheckoutP99' },
  },
];

/** The operations a run measured, in the order the report shows them. */
export function operationsOf(r: { operations?: Operation[] }): readonly Operation[] {
  return r.operations ?? LEGACY;
}

const num = (v: unknown) => (typeof v === 'number' ? v : Number.NaN);

/** One operation's ratios in a row of the run's ratios (NaN where the run has none). */
export function ratiosOf(row: RatioRow, op: Operation): OperationRatios {
  const own = row.operations?.[op.own];
  if (own) {
    // JSON has no NaN: a ratio that could not be computed was stored as null.
    return Object.fromEntries(Object.entries(own).map(([k, v]) => [k, num(v)])) as unknown as OperationRatios;
  }
  const legacy = LEGACY.find((l) => l.own === op.own);
  const field = (k: keyof (typeof LEGACY)[number]['fields']) => num(legacy ? row[legacy.fields[k]] : undefined);
  return {
    r1: field('r1'),
    r1Wall: field('r1Wall'),
    r2p50: field('r2p50'),
    r2p99: field('r2p99'),
    r1Fair: Number.NaN,
    r1FairWall: Number.NaN,
    r2FairP50: Number.NaN,
    r2FairP99: Number.NaN,
  };
}
