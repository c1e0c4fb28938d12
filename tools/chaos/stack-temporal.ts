// The Temporal of a chaos stack: the embedded dev server on its own SQLite file (what
// `npm start` runs), or the multi-process cluster on PostgreSQL (what `npm run cluster`
// runs, here on free ports and without the Web UI). Either is registered with the stack's
// supervisor, so a process the run kills is started again on the same data.
import type { WriteStream } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineCluster } from '../cluster/cluster.js';
import { findFreeBase } from '../cluster/ports.js';
import { superviseCluster } from '../cluster/supervise.js';
import { startDevServer } from '../dev-server.js';
import type { RestartPolicy } from '../supervisor/part.js';
import { freePort } from '../supervisor/ports.js';
import type { Supervisor } from '../supervisor/supervisor.js';
import { ensureTemporalCli } from '../temporal-cli.js';
import type { Topology } from './fault-schedule.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const DAY = 24 * 3_600_000;

/**
 * The cluster's processes are more patient than the stack's others: one that dies while
 * PostgreSQL is being restarted cannot start again until it is back.
 */
const REVIVE_CLUSTER: RestartPolicy = { maxFailedStarts: 10, initialDelayMs: 1_000, maxDelayMs: 5_000, stableAfterMs: 0 };

export interface ChaosTemporalOptions {
  dir: string;
  topology: Topology;
  supervisor: Supervisor;
  /** The restart policy of the embedded dev server (the stack's own). */
  revive: RestartPolicy;
  readyTimeoutMs: number;
  /** A log file of the run, by process name. */
  logFile(name: string): WriteStream;
  log(line: string): void;
}

export interface ChaosTemporal {
  address: string;
  /** The cluster's PostgreSQL database for the API instances' rate windows (none on the dev server). */
  limitsUrl?: string;
  /** Closes the cluster's log files (nothing for the dev server, whose lines go to logFile). */
  closeLogs(): Promise<void>;
}

export async function startChaosTemporal(opts: ChaosTemporalOptions): Promise<ChaosTemporal> {
  if (opts.topology === 'embedded') {
    const temporalLog = opts.logFile('temporal');
    const temporal = await startDevServer({
      bin: ensureTemporalCli(),
      dbFile: join(opts.dir, 'temporal.db'),
      port: await freePort(),
      headless: true,
      logLevel: 'error',
      retentionMs: DAY,
      onOutput: (line) => temporalLog.write(line + '\n'),
      readyTimeoutMs: 90_000,
      supervisor: opts.supervisor,
      restart: opts.revive,
    });
    return { address: temporal.address, closeLogs: () => Promise.resolve() };
  }
  const definition = defineCluster({
    root: ROOT,
    dataDir: join(opts.dir, 'cluster'),
    basePort: await findFreeBase(),
    retentionMs: DAY,
    ui: false,
  });
  const cluster = await superviseCluster(definition, {
    supervisor: opts.supervisor,
    restart: REVIVE_CLUSTER,
    readyTimeoutMs: opts.readyTimeoutMs,
    onStep: (step, { note, ms }) => {
      if (note !== undefined) opts.log(`cluster ${step.name}: ${note} (${((ms ?? 0) / 1000).toFixed(1)} s)`);
    },
  });
  return { address: definition.frontendAddress, limitsUrl: definition.limitsUrl, closeLogs: () => cluster.closeLogs() };
}
