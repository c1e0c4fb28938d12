// The embedded Temporal dev server (`temporal server start-dev` from the Temporal CLI) on a
// SQLite file. This is the one place that starts it, for `npm start`, the test suite's
// global setup, the benchmarks and the chaos run, so all of them run the same server with
// the same settings. It runs as a supervised part (tools/supervisor): up once its frontend
// answers and, when a retention is given, once the namespace is prepared for retrysafe, the
// same again after every restart on the same file; stopped with SIGTERM so that SQLite is
// closed cleanly.
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { Connection } from '@temporalio/client';
import { setupNamespace, waitForSearchAttributes } from '../common/namespace-setup.js';
import type { Part, RestartPolicy } from './supervisor/part.js';
import { Supervisor } from './supervisor/supervisor.js';
import { TEMPORAL_CONNECTION_VARS } from '../common/temporal.js';
import { OTEL_VARIABLES } from '../common/tracing/config.js';

/** One setting of the embedded server: its command-line arguments and why it is there. */
export interface DevServerSetting {
  /** Stable name, for an ablation (`without`) and for reports. */
  name: string;
  /** Arguments after `server start-dev`. */
  args: readonly string[];
  /** One line: what was measured, and why it pays. */
  why: string;
}

function dynamicConfig(key: string, value: string | number | boolean): string[] {
  return ['--dynamic-config-value', `${key}=${JSON.stringify(value)}`];
}

/**
 * What every embedded server starts with, for the launcher, the tests, the bench and the
 * chaos run at once. Each entry was measured to pay on this machine class (2 cores, one
 * history shard, SQLite on a VM disk), or is behaviour the service promises (fairness);
 * the bench toggles them off one at a time.
 */
export const DEV_SERVER_TUNING: readonly DevServerSetting[] = [
  {
    name: 'transfer-poll-rps',
    args: dynamicConfig('history.transferProcessorMaxPollRPS', 1000),
    why: 'the one shard polls its transfer queue at most 20/s by default: every workflow and activity task waits up to 50 ms to be dispatched',
  },
  {
    name: 'timer-poll-rps',
    args: dynamicConfig('history.timerProcessorMaxPollRPS', 1000),
    why: 'the same limit on the timer queue delays retries, timeouts and the attention timer',
  },
  {
    name: 'visibility-poll-rps',
    args: dynamicConfig('history.visibilityProcessorMaxPollRPS', 1000),
    why: 'the same limit on the visibility queue delays the search attributes a list or the Web UI filters on',
  },
  {
    name: 'one-task-queue-partition',
    args: [
      ...dynamicConfig('matching.numTaskqueueReadPartitions', 1),
      ...dynamicConfig('matching.numTaskqueueWritePartitions', 1),
    ],
    why: 'four partitions per task queue (the default) make few pollers on one host forward tasks between partitions',
  },
  {
    name: 'task-queue-fairness',
    args: dynamicConfig('matching.enableFairness', true),
    why: "one tenant's flood must not starve another's operations: tasks are dispatched in proportion per fairness key (the tenant) instead of first in, first out",
  },
  {
    name: 'stuck-after-two-failures',
    args: dynamicConfig('system.numConsecutiveWorkflowTaskProblemsToTriggerSearchAttribute', 2),
    why: 'an operation whose workflow tasks keep failing is flagged (TemporalReportedProblems: its resource, the list and retrysafe_operations_stuck say so) after two failures in a row instead of five, within seconds rather than half a minute',
  },
  {
    name: 'sqlite-wal',
    args: ['--sqlite-pragma', 'journal_mode=wal', '--sqlite-pragma', 'synchronous=full'],
    why: "a write-ahead log commits with one fsync instead of a rollback journal's several; synchronous=full keeps every commit durable",
  },
];

/** The tuning arguments, without the settings named in `without` (an unknown name is an error). */
export function devServerTuningArgs(without: readonly string[] = []): string[] {
  const unknown = without.filter((name) => !DEV_SERVER_TUNING.some((s) => s.name === name));
  if (unknown.length > 0) throw new Error(`unknown dev server setting: ${unknown.join(', ')}`);
  return DEV_SERVER_TUNING.filter((s) => !without.includes(s.name)).flatMap((s) => s.args);
}

export interface DevServerOptions {
  bin: string;
  /** SQLite file for persistence; omit for an in-memory server (tests only). */
  dbFile?: string;
  ip?: string;
  port: number;
  uiPort?: number;
  /** Disable the Web UI. */
  headless?: boolean;
  /** Settings of DEV_SERVER_TUNING to leave out (by name), to measure what each one buys. */
  without?: readonly string[];
  namespace?: string;
  /**
   * When set, the namespace is prepared for retrysafe at every start: the search attributes
   * the workflows write, and this retention.
   */
  retentionMs?: number;
  logLevel?: 'debug' | 'info' | 'warn' | 'error';
  /** Where the server's own output goes; defaults to being discarded. */
  onOutput?: (line: string) => void;
  /** Called with each new process id (a restart is a new process). */
  onSpawn?: (pid: number) => void;
  readyTimeoutMs?: number;
  stopGraceMs?: number;
  /**
   * Own process group: a terminal's Ctrl-C then reaches only the supervisor, which stops
   * the server last, after the processes that use it.
   */
  detached?: boolean;
  /** The supervisor to run it in (its stop order then applies); a private one otherwise. */
  supervisor?: Supervisor;
  restart?: RestartPolicy;
  /** Calls the start off (a Ctrl-C while it is starting). */
  signal?: AbortSignal;
}

export interface DevServer {
  address: string;
  uiUrl?: string;
  /** The arguments after the binary, as started. */
  argv: string[];
  /** The supervised part: its process id, restarts, stop and start. */
  part: Part;
  stop(): Promise<void>;
}

/** The command line of the dev server, after the binary. */
export function devServerArgs(opts: DevServerOptions): string[] {
  const args = ['server', 'start-dev', '--ip', opts.ip ?? '127.0.0.1', '--port', String(opts.port)];
  args.push('--log-level', opts.logLevel ?? 'warn', '--namespace', opts.namespace ?? 'default');
  if (opts.dbFile) args.push('--db-filename', opts.dbFile);
  if (opts.headless) args.push('--headless');
  else if (opts.uiPort) args.push('--ui-port', String(opts.uiPort));
  args.push(...devServerTuningArgs(opts.without));
  return args;
}

export async function startDevServer(opts: DevServerOptions): Promise<DevServer> {
  const ip = opts.ip ?? '127.0.0.1';
  const address = `${ip}:${opts.port}`;
  const namespace = opts.namespace ?? 'default';
  if (opts.dbFile) mkdirSync(dirname(opts.dbFile), { recursive: true });
  const argv = devServerArgs(opts);
  const supervisor = opts.supervisor ?? new Supervisor();
  const part = supervisor.add({
    name: 'temporal',
    command: { bin: opts.bin, args: argv },
    detached: opts.detached ?? false,
    // A server has no use for a client's cluster credentials, nor for retrysafe's trace settings.
    unsetEnv: [...TEMPORAL_CONNECTION_VARS, OTEL_VARIABLES],
    readyTimeoutMs: opts.readyTimeoutMs ?? 60_000,
    stopGraceMs: opts.stopGraceMs ?? 10_000,
    ...(opts.restart ? { restart: opts.restart } : {}),
    keepLines: 50,
    ...(opts.onSpawn ? { onSpawn: opts.onSpawn } : {}),
    onLine: (line) => {
      if (line.trim()) opts.onOutput?.(line);
    },
    ready: async (ctx) => {
      await ctx.poll(`its frontend at ${address}`, () => answers(address, namespace), 250);
      if (opts.retentionMs === undefined || ctx.signal.aborted) return;
      try {
        const connection = await Connection.connect({ address, connectTimeout: 5_000 });
        try {
          await setupNamespace(connection, namespace, { retentionMs: opts.retentionMs });
          await waitForSearchAttributes(connection, namespace);
        } finally {
          await connection.close();
        }
      } catch (err) {
        throw new Error(`could not prepare namespace ${namespace}: ${(err as Error).message}`);
      }
    },
  });
  await part.start(opts.signal);
  return {
    address,
    ...(opts.headless ? {} : { uiUrl: `http://${ip === '0.0.0.0' ? 'localhost' : ip}:${opts.uiPort ?? opts.port + 1000}` }),
    argv,
    part,
    async stop() {
      await part.stop();
    },
  };
}

/** Whether the frontend at `address` answers for `namespace`. */
async function answers(address: string, namespace: string): Promise<boolean> {
  try {
    const connection = await Connection.connect({ address, connectTimeout: 1_000 });
    try {
      await connection.workflowService.describeNamespace({ namespace });
      return true;
    } finally {
      await connection.close();
    }
  } catch {
    return false;
  }
}
