// The embedded dev server's tuning as the bench sees it: one entry per setting that the
// ablation can switch off (its command-line arguments and why it is there), and a way to
// start the server without some of them.
//
// The list comes from common/dev-server.ts: `DEV_SERVER_TUNING` when it exports one, else
// one entry per `DEV_SERVER_DYNAMIC_CONFIG` key. TEMPORARY SHIM: while common/dev-server.ts
// has neither, the bench applies the settings measured to matter on this machine (SHIM
// below) to its own servers, and says so in the report; `npm start` does not run them
// then. Once common/dev-server.ts exports its tuning, the shim is unused, and once
// startDevServer can leave settings out, startDevServerWithout can call it instead.
import { Connection } from '@temporalio/client';
import * as devServer from '../common/dev-server.js';
import type { DevServer, DevServerOptions } from '../common/dev-server.js';
import { setupNamespace, waitForSearchAttributes } from '../common/namespace-setup.js';
import { Supervisor } from '../common/supervisor/supervisor.js';
import { TEMPORAL_CONNECTION_VARS } from '../common/temporal.js';

export interface TuningSetting {
  /** Short name, as the ablation table's row says "without <name>". */
  name: string;
  /** The arguments after `temporal` that apply it (a contiguous run of the server's argv). */
  args: readonly string[];
  why: string;
}

export interface Tuning {
  settings: readonly TuningSetting[];
  /** Where the list came from, for the report. */
  source: string;
  /** True when startDevServer applies the settings itself (the launcher, tests and chaos run have them too). */
  appliedByDevServer: boolean;
}

const dynamic = (key: string, value: number | string | boolean) => ['--dynamic-config-value', `${key}=${JSON.stringify(value)}`];

/** What the experiments measured on this machine; used only while common/dev-server.ts exports no tuning. */
const SHIM: TuningSetting[] = [
  {
    name: 'transfer queue poll rate',
    args: dynamic('history.transferProcessorMaxPollRPS', 1000),
    why: 'one history shard polls its transfer queue at most 20 times a second by default: ~35 ms before each workflow and activity task',
  },
  {
    name: 'timer queue poll rate',
    args: dynamic('history.timerProcessorMaxPollRPS', 1000),
    why: "the same limiter on the timer queue (timeouts, retry back-off, the workflow's own timers)",
  },
  {
    name: 'visibility queue poll rate',
    args: dynamic('history.visibilityProcessorMaxPollRPS', 1000),
    why: 'the same limiter on visibility (search-attribute upserts, list and count queries)',
  },
  {
    name: 'SQLite WAL',
    args: ['--sqlite-pragma', 'journal_mode=wal', '--sqlite-pragma', 'synchronous=full'],
    why: 'write-ahead log with synchronous=FULL: one fsync per commit, readers do not block the writer',
  },
];

function isSettingList(value: unknown): value is TuningSetting[] {
  return (
    Array.isArray(value) &&
    value.every(
      (s: Partial<TuningSetting>) =>
        typeof s?.name === 'string' && Array.isArray(s.args) && s.args.every((a) => typeof a === 'string'),
    )
  );
}

type DynamicConfig = ReadonlyArray<readonly [key: string, value: string | number | boolean]>;

function isDynamicConfig(value: unknown): value is DynamicConfig {
  return Array.isArray(value) && value.every((e) => Array.isArray(e) && typeof e[0] === 'string');
}

export function devServerTuning(): Tuning {
  // Both looked up dynamically: the dev server's module exports one or the other (or
  // neither) depending on how far its tuning has landed, and the bench must build with each.
  const dev = devServer as { DEV_SERVER_TUNING?: unknown; DEV_SERVER_DYNAMIC_CONFIG?: unknown };
  const exported = dev.DEV_SERVER_TUNING;
  if (isSettingList(exported)) {
    return {
      settings: exported.map((s) => ({ ...s, why: s.why ?? '' })),
      source: 'common/dev-server.ts DEV_SERVER_TUNING',
      appliedByDevServer: true,
    };
  }
  const dynamicConfig = dev.DEV_SERVER_DYNAMIC_CONFIG;
  if (isDynamicConfig(dynamicConfig) && dynamicConfig.length > 0) {
    return {
      settings: dynamicConfig.map(([key, value]) => ({ name: key, args: dynamic(key, value), why: '' })),
      source: 'common/dev-server.ts DEV_SERVER_DYNAMIC_CONFIG',
      appliedByDevServer: true,
    };
  }
  return {
    settings: SHIM,
    source: 'bench/tuning.ts (temporary shim: common/dev-server.ts exports no tuning yet, so npm start does not apply it)',
    appliedByDevServer: false,
  };
}

/** Where `part` starts in `argv` as a contiguous run, or -1. */
function indexOfRun(argv: readonly string[], part: readonly string[]): number {
  for (let i = 0; i + part.length <= argv.length; i++) if (part.every((a, j) => argv[i + j] === a)) return i;
  return -1;
}

/**
 * The dev server's argv with every setting of `tuning` applied except those named in
 * `without`. Throws when a setting to leave out is not in the argv: a row of the ablation
 * must never silently measure the full configuration.
 */
export function argvWithout(opts: DevServerOptions, tuning: Tuning, without: readonly string[]): string[] {
  let argv = devServer.devServerArgs(opts);
  if (!tuning.appliedByDevServer) argv = [...argv, ...tuning.settings.flatMap((s) => s.args)];
  for (const name of without) {
    const setting = tuning.settings.find((s) => s.name === name);
    if (!setting) throw new Error(`no dev-server setting named ${name}`);
    const at = indexOfRun(argv, setting.args);
    if (at < 0) throw new Error(`the dev server's argv does not contain ${setting.args.join(' ')} (${name})`);
    argv = [...argv.slice(0, at), ...argv.slice(at + setting.args.length)];
  }
  return argv;
}

/**
 * Starts the dev server with every setting but those in `without`. With nothing left out
 * and the settings applied by common/dev-server.ts, that is startDevServer itself, the one
 * place the launcher, the tests and the chaos run use; otherwise the same part (the same
 * readiness and namespace preparation) with the argv above.
 */
export async function startDevServerWithout(
  opts: DevServerOptions & { retentionMs: number; supervisor: Supervisor },
  tuning: Tuning,
  without: readonly string[],
): Promise<DevServer> {
  if (tuning.appliedByDevServer && without.length === 0) return devServer.startDevServer(opts);
  const argv = argvWithout(opts, tuning, without);
  const ip = opts.ip ?? '127.0.0.1';
  const address = `${ip}:${opts.port}`;
  const namespace = opts.namespace ?? 'default';
  const part = opts.supervisor.add({
    name: 'temporal',
    command: { bin: opts.bin, args: argv },
    detached: opts.detached ?? false,
    unsetEnv: TEMPORAL_CONNECTION_VARS,
    readyTimeoutMs: opts.readyTimeoutMs ?? 60_000,
    stopGraceMs: opts.stopGraceMs ?? 10_000,
    keepLines: 50,
    ready: async (ctx) => {
      await ctx.poll(`its frontend at ${address}`, () => answers(address, namespace), 250);
      if (ctx.signal.aborted) return;
      const connection = await Connection.connect({ address, connectTimeout: 5_000 });
      try {
        await setupNamespace(connection, namespace, { retentionMs: opts.retentionMs });
        await waitForSearchAttributes(connection, namespace);
      } finally {
        await connection.close();
      }
    },
  });
  await part.start(opts.signal);
  return { address, argv, part, stop: async () => void (await part.stop()) };
}

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
