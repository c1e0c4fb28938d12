// The launcher's input: command-line flags (node:util parseArgs, strict) and environment
// variables (one zod schema, parsed once). Every child's own settings are validated here
// too, before anything starts, so a bad value is reported at once and not after Temporal
// has been brought up.
import { isAbsolute, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { z } from 'zod';
import { ConfigError, duration, httpUrl, parseEnv, port, problemCollector } from '../../common/env.js';
import { portBlockSize } from '../cluster/ports.js';
import { operationFolders, type OperationFolder } from './definition-folders.js';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

export const USAGE = `Usage: npm start [-- options]        (or: npx tsx tools/start.ts [options])
       npm run cluster [-- options]  (the same with --cluster)

Starts Temporal (dev server, SQLite), the sandbox bank and reservation service, the
worker and the API, in order,
and prints their URLs. Ctrl-C stops everything; a second Ctrl-C forces.

Options:
  --cluster  a multi-process Temporal cluster on PostgreSQL instead of the dev server
             (frontend, matching, two history processes, worker service, Web UI; built
             with go the first time), with two workers and two API instances
             (API_PORT and API_PORT+1); data in .data/cluster
  --reset    delete the data directory first (start from empty data)
  --faults   start the sandbox services with fault injection (SANDBOX_FAULTS=1)
  --traces   also start a Zipkin server (Java 17; fetched once from Maven Central into
             .tools/zipkin) and send every process's traces to it: UI on ZIPKIN_PORT,
             an operation's trace at /zipkin/traces/<its traceId>. See docs/operating.md
  --operations <folder>
             also run the operations of <folder>/operations.ts (repeatable); the
             worker finds the services they call in RETRYSAFE_SERVICES. See
             docs/operations.md (examples/shipping)
  -h, --help show this help

Environment (defaults in brackets):
  RETRYSAFE_DATA_DIR [.data, or .data/cluster with --cluster]   RETRYSAFE_RETENTION [7d, at least 1h]
  TEMPORAL_PORT [7233; with --cluster the frontend, the cluster's other ports follow it]
  TEMPORAL_UI_PORT [8233]  BANK_PORT [4001]
  RESERVATIONS_PORT [4002]  WORKER_METRICS_PORT [9464]  API_PORT [3000]  RETRYSAFE_API_KEYS [unset: dev mode]
  ZIPKIN_PORT [9411, with --traces]  OTEL_TRACES_EXPORTER and the other OTEL_* variables [unset: no tracing]
  RETRYSAFE_OPERATIONS [unset]: folders of operations, as --operations
  RETRYSAFE_SERVICES [unset]: <service>=<base URL>,... for the services those operations call
  TEMPORAL_ADDRESS [unset]: use that cluster instead of starting a dev server
    (with TEMPORAL_NAMESPACE, TEMPORAL_API_KEY, TEMPORAL_TLS_*)
  RETRYSAFE_START_TIMEOUT [60s] per part   RETRYSAFE_STOP_GRACE [10s] per part`;

/** A command-line mistake: reported with the usage text, exit code 2. */
export class UsageError extends Error {
  override name = 'UsageError';
}

export interface Flags {
  reset: boolean;
  faults: boolean;
  cluster: boolean;
  /** Run the Zipkin server and send every process's traces to it. */
  traces: boolean;
  help: boolean;
  /** Folders of operations from outside, as given (each may list several, comma-separated). */
  operations: string[];
}

export function parseFlags(argv: string[]): Flags {
  try {
    const { values } = parseArgs({
      args: argv,
      options: {
        reset: { type: 'boolean' },
        faults: { type: 'boolean' },
        cluster: { type: 'boolean' },
        traces: { type: 'boolean' },
        operations: { type: 'string', multiple: true },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
      allowPositionals: false,
    });
    return {
      reset: values.reset ?? false,
      faults: values.faults ?? false,
      cluster: values.cluster ?? false,
      traces: values.traces ?? false,
      help: values.help ?? false,
      operations: values.operations ?? [],
    };
  } catch (err) {
    const { code, message } = err as NodeJS.ErrnoException;
    const quoted = /'([^']+)'/.exec(message)?.[1];
    if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') throw new UsageError(`unknown option '${quoted ?? '?'}'`);
    if (code === 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL') throw new UsageError(`unexpected argument '${quoted ?? '?'}'`);
    // ERR_PARSE_ARGS_INVALID_OPTION_VALUE: "--reset=yes"; Node's first sentence says it well.
    throw new UsageError(message.split('. ')[0] ?? message);
  }
}

/** A port the launcher prints and probes: 0 ("any free port") cannot be announced. */
const fixedPort = port.refine((n) => n !== 0, 'must be a fixed port between 1 and 65535');

export const launcherEnv = {
  RETRYSAFE_DATA_DIR: z.string().optional(),
  // The namespace retention is how long a finished operation's key is remembered. The dev
  // server refuses less than one hour.
  RETRYSAFE_RETENTION: duration({ min: HOUR }).default(7 * DAY),
  TEMPORAL_ADDRESS: z.string().optional(),
  TEMPORAL_NAMESPACE: z.string().min(1).default('default'),
  TEMPORAL_UI_URL: httpUrl.optional(),
  TEMPORAL_PORT: fixedPort.default(7233),
  TEMPORAL_UI_PORT: fixedPort.default(8233),
  BANK_HOST: z.string().min(1).default('127.0.0.1'),
  BANK_PORT: fixedPort.default(4001),
  RESERVATIONS_PORT: fixedPort.default(4002),
  WORKER_METRICS_PORT: fixedPort.default(9464),
  API_HOST: z.string().min(1).default('127.0.0.1'),
  API_PORT: fixedPort.default(3000),
  ZIPKIN_PORT: fixedPort.default(9411),
  RETRYSAFE_TASK_QUEUE: z.string().min(1).default('retrysafe'),
  RETRYSAFE_START_TIMEOUT: duration({ min: 1_000, max: 600_000 }).default(60_000),
  RETRYSAFE_STOP_GRACE: duration({ min: 100, max: 120_000 }).default(10_000),
};

export type TemporalTarget =
  | { mode: 'embedded'; host: string; port: number; uiPort: number; namespace: 'default' }
  /** The multi-process cluster on PostgreSQL (tools/cluster), its frontend on `port`. */
  | { mode: 'cluster'; host: string; port: number; uiPort: number; namespace: 'default' }
  | { mode: 'external'; address: string; namespace: string; uiUrl: string | undefined };

export interface LauncherConfig {
  root: string;
  dataDir: string;
  retentionMs: number;
  temporal: TemporalTarget;
  bank: { host: string; port: number };
  reservationsPort: number;
  workerMetricsPort: number;
  api: { host: string; port: number };
  /**
   * Workers and API instances: 1, or 2 on the cluster (stateless, on one task queue; the
   * second API listens on api.port + 1, the second worker's metrics on workerMetricsPort + 1).
   */
  instances: number;
  taskQueue: string;
  startTimeoutMs: number;
  stopGraceMs: number;
  /** Folders of operations from outside (--operations, RETRYSAFE_OPERATIONS) the APIs and workers load. */
  operations: OperationFolder[];
  /** With --traces: the Zipkin server's port. */
  traces?: { zipkinPort: number };
}

type LauncherEnv = z.infer<z.ZodObject<typeof launcherEnv>>;

export function loadLauncherConfig(
  root: string,
  env: Record<string, string | undefined> = process.env,
  opts: {
    cluster?: boolean;
    /** `--traces`: run the Zipkin server. */
    traces?: boolean;
    /** `--operations` values. */
    operations?: readonly string[];
    /** Where relative folders are taken from: the directory npm was run in (INIT_CWD), else the current one. */
    cwd?: string;
  } = {},
): LauncherConfig {
  const e = parseLauncherEnv(env);
  if (opts.cluster && e.TEMPORAL_ADDRESS) {
    throw new ConfigError([
      `TEMPORAL_ADDRESS=${e.TEMPORAL_ADDRESS}: --cluster starts a cluster of its own; unset TEMPORAL_ADDRESS, or use npm start to use that one`,
    ]);
  }
  const local = { host: '127.0.0.1', port: e.TEMPORAL_PORT, uiPort: e.TEMPORAL_UI_PORT, namespace: 'default' as const };
  const temporal: TemporalTarget = e.TEMPORAL_ADDRESS
    ? { mode: 'external', address: e.TEMPORAL_ADDRESS, namespace: e.TEMPORAL_NAMESPACE, uiUrl: e.TEMPORAL_UI_URL }
    : opts.cluster
      ? { mode: 'cluster', ...local }
      : { mode: 'embedded', ...local };
  const instances = opts.cluster ? 2 : 1;
  const problems = portProblems(e, temporal.mode, instances, opts.traces ?? false);
  const operations =
    problemCollector(problems)(() =>
      operationFolders(opts.operations ?? [], env.RETRYSAFE_OPERATIONS, opts.cwd ?? env.INIT_CWD ?? process.cwd()),
    ) ?? [];
  if (problems.length > 0) throw new ConfigError(problems);

  const dataDir = e.RETRYSAFE_DATA_DIR
    ? isAbsolute(e.RETRYSAFE_DATA_DIR)
      ? e.RETRYSAFE_DATA_DIR
      : resolve(e.RETRYSAFE_DATA_DIR)
    : opts.cluster
      ? join(root, '.data', 'cluster')
      : join(root, '.data');
  return {
    root,
    dataDir,
    retentionMs: e.RETRYSAFE_RETENTION,
    temporal,
    bank: { host: e.BANK_HOST, port: e.BANK_PORT },
    reservationsPort: e.RESERVATIONS_PORT,
    workerMetricsPort: e.WORKER_METRICS_PORT,
    api: { host: e.API_HOST, port: e.API_PORT },
    instances,
    taskQueue: e.RETRYSAFE_TASK_QUEUE,
    startTimeoutMs: e.RETRYSAFE_START_TIMEOUT,
    stopGraceMs: e.RETRYSAFE_STOP_GRACE,
    operations,
    ...(opts.traces ? { traces: { zipkinPort: e.ZIPKIN_PORT } } : {}),
  };
}

/** The launcher's variables; a retention below Temporal's floor says whose floor it is. */
function parseLauncherEnv(env: Record<string, string | undefined>): LauncherEnv {
  try {
    return parseEnv(launcherEnv, env);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    throw new ConfigError(
      err.problems.map((p) =>
        p.startsWith('RETRYSAFE_RETENTION=') && p.includes('below the minimum')
          ? `${p} (Temporal's floor for a namespace's retention)`
          : p,
      ),
    );
  }
}

/** Two parts on one port would fail half-way through the start: refused up front, as are ports inside the cluster's block. */
function portProblems(e: LauncherEnv, mode: TemporalTarget['mode'], instances: number, traces: boolean): string[] {
  const claims: [string, number][] = [
    ['BANK_PORT', e.BANK_PORT],
    ['RESERVATIONS_PORT', e.RESERVATIONS_PORT],
  ];
  for (let i = 0; i < instances; i++) {
    const plus = i === 0 ? '' : `+${i}`;
    claims.push([`WORKER_METRICS_PORT${plus}`, e.WORKER_METRICS_PORT + i], [`API_PORT${plus}`, e.API_PORT + i]);
  }
  if (mode !== 'external') claims.unshift(['TEMPORAL_PORT', e.TEMPORAL_PORT], ['TEMPORAL_UI_PORT', e.TEMPORAL_UI_PORT]);
  if (traces) claims.push(['ZIPKIN_PORT', e.ZIPKIN_PORT]);
  const problems: string[] = [];
  const seen = new Map<number, string>();
  for (const [name, value] of claims) {
    const other = seen.get(value);
    if (other) problems.push(`${other} and ${name} are both ${value}: each part needs its own port`);
    else seen.set(value, name);
  }
  if (mode === 'cluster') {
    // The cluster's processes take a block of ports after the frontend's (see tools/cluster/ports.ts).
    const last = e.TEMPORAL_PORT + portBlockSize() - 1;
    for (const [name, value] of claims) {
      if (name !== 'TEMPORAL_PORT' && value >= e.TEMPORAL_PORT && value <= last)
        problems.push(`${name}=${value} is inside the cluster's ports ${e.TEMPORAL_PORT}-${last} (from TEMPORAL_PORT)`);
    }
    if (last > 65535) problems.push(`TEMPORAL_PORT=${e.TEMPORAL_PORT}: the cluster needs ports up to ${last}`);
  }
  return problems;
}
