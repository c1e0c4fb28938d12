// The cluster of cluster.ts run by the repository's one supervisor: each process a part
// (PostgreSQL as its own user with its fast-shutdown signal, the Temporal services, the
// UI server), started in dependency order with the one-off set-up steps at their points,
// restarted by the caller's policy when one dies, stopped in reverse order. `npm run
// cluster`, the chaos run on the cluster and the cluster tests all start it here.
import { chmodSync, createWriteStream, mkdirSync, type WriteStream } from 'node:fs';
import { join } from 'node:path';
import type { Part, RestartPolicy } from '../supervisor/part.js';
import { AbortedError, StartError } from '../supervisor/ready.js';
import type { Supervisor } from '../supervisor/supervisor.js';
import { TEMPORAL_CONNECTION_VARS } from '../../common/temporal.js';
import type { ClusterDefinition, ClusterProcess, SetupPhase, SetupStep } from './cluster.js';
import { startInWaves } from './waves.js';
import { OTEL_VARIABLES } from '../../common/tracing/config.js';

export interface SuperviseOptions {
  supervisor: Supervisor;
  /** What happens when a process dies on its own; none: it is only reported. */
  restart?: RestartPolicy;
  /** Per process; a history process needs its shards and a fixed settling pause first. */
  readyTimeoutMs?: number;
  /** Calls the start off (Ctrl-C while starting). */
  signal?: AbortSignal;
  /** Every output line, besides the process's log file. */
  onLine?(process: ClusterProcess, line: string, stream: 'stdout' | 'stderr'): void;
  /** Before and after each set-up step (a first build takes minutes: say so before). */
  onStep?(step: SetupStep, event: { note?: string; ms?: number }): void;
  onStarting?(process: ClusterProcess): void;
  onReady?(process: ClusterProcess, ms: number): void;
}

export interface SupervisedCluster {
  definition: ClusterDefinition;
  /** Each process's part, by its name (postgres, temporal-history-1...). */
  parts: Map<string, Part>;
  part(name: string): Part;
  /** `<dataDir>/logs`: one file per process, appended across restarts. */
  logDir: string;
  /** Closes the log files; call after the supervisor stopped the parts. */
  closeLogs(): Promise<void>;
}

/**
 * Runs the set-up, registers every process with the supervisor (in start order, so that the
 * supervisor's stopAll stops them in reverse) and starts them. Throws StartError naming the
 * process or step that failed, AbortedError when called off; what started stays registered
 * for the caller's stopAll.
 */
export async function superviseCluster(definition: ClusterDefinition, opts: SuperviseOptions): Promise<SupervisedCluster> {
  const logDir = join(definition.dataDir, 'logs');
  mkdirSync(logDir, { recursive: true });
  // PostgreSQL runs as its own user when we are root: it must be able to reach its folder.
  chmodSync(definition.dataDir, 0o755);
  const files: WriteStream[] = [];
  const parts = new Map<string, Part>();
  const cluster: SupervisedCluster = {
    definition,
    parts,
    part(name) {
      const part = parts.get(name);
      if (!part) throw new Error(`no cluster process named ${name}`);
      return part;
    },
    logDir,
    closeLogs: () => Promise.all(files.map((f) => new Promise<void>((resolve) => f.end(resolve)))).then(() => undefined),
  };

  const runSteps = async (phase: SetupPhase) => {
    for (const step of definition.setup.filter((s) => s.phase === phase)) {
      if (opts.signal?.aborted) throw new AbortedError();
      opts.onStep?.(step, {});
      const t0 = performance.now();
      let note: string;
      try {
        note = await step.run();
      } catch (err) {
        throw new StartError(step.name, (err as Error).message);
      }
      opts.onStep?.(step, { note, ms: performance.now() - t0 });
    }
  };

  await runSteps('before-start');
  for (const p of definition.processes) {
    const log = createWriteStream(join(logDir, `${p.name}.log`), { flags: 'a' });
    files.push(log);
    parts.set(
      p.name,
      opts.supervisor.add({
        name: p.name,
        // Should this process die outright, the kernel stops the servers as a stop would.
        command: { bin: p.file, args: p.args, orphanSignal: p.stopSignal },
        cwd: p.cwd,
        env: p.env,
        // Nor retrysafe's trace settings, which the servers would read as their own.
        unsetEnv: [...TEMPORAL_CONNECTION_VARS, OTEL_VARIABLES],
        ...(p.uid !== undefined ? { uid: p.uid, gid: p.gid } : {}),
        ready: (ctx) => ctx.poll(p.ready.description, () => p.ready.check(), 250),
        readyTimeoutMs: opts.readyTimeoutMs ?? 180_000,
        stopSignal: p.stopSignal,
        stopGraceMs: p.stopGraceMs,
        ...(opts.restart ? { restart: opts.restart } : {}),
        keepLines: 50,
        onSpawn: (pid) => log.write(`--- ${p.name} started at ${new Date().toISOString()} (pid ${pid})\n`),
        onLine: (line, stream) => {
          log.write(line + '\n');
          opts.onLine?.(p, line, stream);
        },
      }),
    );
  }

  await startInWaves(
    definition.processes,
    async (p) => {
      opts.onStarting?.(p);
      const t0 = performance.now();
      await cluster.part(p.name).start(opts.signal);
      opts.onReady?.(p, performance.now() - t0);
    },
    () => runSteps('postgres-ready'),
  );
  await runSteps('cluster-ready');
  return cluster;
}
