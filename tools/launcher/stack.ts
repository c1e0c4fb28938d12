// Brings the stack up part by part (Temporal, bank, reservations, worker, API), each
// waited for before the next (with --traces, the Zipkin server beside Temporal), then keeps it up: a part that dies is restarted with
// back-off and the output says so; a signal stops everything in reverse order; a part that
// cannot start three times in a row stops the stack, with a last line naming it.
import { join } from 'node:path';
import ms from 'ms';
import { describeExit, killLeftovers } from '../supervisor/child.js';
import type { PartEvent } from '../supervisor/part.js';
import { assertPortsFree, PortBusyError, type PortClaim } from '../supervisor/ports.js';
import { AbortedError, StartError } from '../supervisor/ready.js';
import { RESTART_WITH_BACKOFF, Supervisor } from '../supervisor/supervisor.js';
import type { LauncherConfig } from './options.js';
import type { Output } from './output.js';
import { renderBanner } from './banner.js';
import { claimDataDir, resetDataDir, takeOverDataDir, type DataDirClaim } from './data-dir.js';
import { stackParts, validateParts, type ServiceSettings, type StackPart, type StackSpec } from './parts.js';
import { answers, displayOrigin, type OutsideOperations } from './definition-folders.js';
import { clusterDefinition, startTemporal } from './temporal.js';
import { startZipkin, zipkinJar } from './traces.js';
import { zipkinUrls } from '../zipkin.js';
import type { ClusterDefinition } from '../cluster/cluster.js';

export interface RunOptions {
  config: LauncherConfig;
  output: Output;
  reset: boolean;
  faults: boolean;
  /** performance.now() when the launcher started: the banner reports the time to ready. */
  startedAt: number;
  /** What the folders of --operations add (checked before the call). */
  outside?: OutsideOperations;
}

/** Exit codes: 0 stopped on request, 1 a part failed, 130 forced by a second signal. */
export async function runStack(opts: RunOptions): Promise<number> {
  const { config, output } = opts;
  const cluster = config.temporal.mode === 'cluster' ? clusterDefinition(config) : undefined;
  const stack = stackSpec(opts, cluster);
  // Every child's settings are checked before anything starts (ConfigError → exit 2).
  const settings = validateParts(stack);
  const supervisor = new Supervisor((event) => report(event, output));
  const stopRequest = stopOnSignals(supervisor, output);
  try {
    const prepared = await prepare(opts, stack, cluster);
    if (typeof prepared === 'number') return prepared;
    const launch: Launch = { config, output, stack, supervisor, stop: stopRequest.signal, dataDir: prepared.dataDir };
    const failed = await startAll(launch, prepared.jar);
    if (failed !== undefined) return failed;
    await announce(opts, stack, settings);
    return await keepUp(launch);
  } finally {
    stopRequest.dispose();
  }
}

/** What the phases of a start share. */
interface Launch {
  config: LauncherConfig;
  output: Output;
  stack: StackSpec;
  supervisor: Supervisor;
  /** Aborted by the first signal. */
  stop: AbortSignal;
  dataDir: DataDirClaim;
}

/** Where every part finds Temporal (and, with --traces, Zipkin), as the launcher will run them. */
function stackSpec(opts: RunOptions, cluster: ClusterDefinition | undefined): StackSpec {
  const { config } = opts;
  const t = config.temporal;
  return {
    config,
    faults: opts.faults,
    prettyLogs: opts.output.tty,
    temporal:
      t.mode === 'external'
        ? { address: t.address, namespace: t.namespace, uiUrl: t.uiUrl, embedded: false }
        : {
            address: `${t.host}:${t.port}`,
            namespace: 'default',
            uiUrl: `http://localhost:${t.uiPort}`,
            embedded: t.mode === 'embedded',
            ...(cluster
              ? {
                  cluster: {
                    postgres: `127.0.0.1:${cluster.ports.postgres}`,
                    processes: cluster.processes.map((p) => p.name),
                    logDir: join(cluster.dataDir, 'logs'),
                    limitsUrl: cluster.limitsUrl,
                  },
                }
              : {}),
          },
    ...(config.traces ? { traces: zipkinUrls(config.traces.zipkinPort) } : {}),
  };
}

/**
 * Signals: the first one stops the stack gracefully, a later one forces. A repeat within
 * half a second is the same Ctrl-C relayed twice (npm and tsx both forward it), not a
 * person insisting.
 */
function stopOnSignals(supervisor: Supervisor, output: Output): { signal: AbortSignal; dispose(): void } {
  const stopRequest = new AbortController();
  let firstSignalAt = 0;
  const onSignal = (signal: NodeJS.Signals) => {
    if (!stopRequest.signal.aborted) {
      firstSignalAt = Date.now();
      output.info(`${signal}: stopping (again to force)`);
      stopRequest.abort(signal);
      return;
    }
    if (Date.now() - firstSignalAt < 500) return;
    output.warn(`${signal} again: killing everything now`);
    supervisor.killAll();
    killLeftovers('SIGKILL');
    process.exit(130);
  };
  const signals: NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];
  for (const s of signals) process.on(s, onSignal);
  return { signal: stopRequest.signal, dispose: () => signals.forEach((s) => process.off(s, onSignal)) };
}

function fail(output: Output, part: string, reason: string): number {
  output.fatal(`could not start ${part}: ${reason}`);
  return 1;
}

/**
 * Before anything starts: the data dir taken over from a launcher that died, every port
 * free, --reset, Zipkin's jar; then the data dir claimed. An exit code when one of them fails.
 */
async function prepare(
  opts: RunOptions,
  stack: StackSpec,
  cluster: ClusterDefinition | undefined,
): Promise<number | { jar: string | undefined; dataDir: DataDirClaim }> {
  const { config, output } = opts;
  const note = await takeOverDataDir(config.dataDir);
  if (note) output.warn(note);
  // Ports next, all of them: a clash is reported before anything is started.
  const claims: PortClaim[] = [
    ...zipkinClaims(config),
    ...temporalClaims(config, cluster),
    ...stackParts(stack).flatMap((s) => s.ports),
  ];
  try {
    await assertPortsFree(claims);
  } catch (err) {
    if (err instanceof PortBusyError) return fail(output, err.claim.part, err.message);
    throw err;
  }
  if (opts.reset) {
    resetDataDir(config.dataDir, config.root);
    output.info(`--reset: deleted ${config.dataDir}`);
  }
  let jar: string | undefined;
  try {
    // Fetched (the first time) before anything starts: a missing Java is reported at once.
    if (config.traces) jar = zipkinJar(config, output);
  } catch (err) {
    if (err instanceof StartError) return fail(output, err.part, err.message);
    throw err;
  }
  return { jar, dataDir: claimDataDir(config.dataDir) };
}

/** Stops every part, in reverse order, and lets the data dir go. */
async function stopAll({ supervisor, output, dataDir }: Launch): Promise<void> {
  await supervisor.stopAll((part, { ms: took, exit }) =>
    output.info(`${part.name} stopped (${seconds(took)}${exit?.signal === 'SIGKILL' ? ', killed after its grace period' : ''})`),
  );
  dataDir.release();
}

/** Temporal (with Zipkin beside it), then each part in order; an exit code when the start does not get through. */
async function startAll(launch: Launch, jar: string | undefined): Promise<number | undefined> {
  const { output, supervisor, stop } = launch;
  try {
    await startTemporalAndZipkin(launch, jar);
    await startParts(launch);
    return undefined;
  } catch (err) {
    if (err instanceof AbortedError || stop.aborted) {
      await stopAll(launch);
      output.info('stopped before the stack was ready');
      return 0;
    }
    if (!(err instanceof StartError)) {
      await stopAll(launch);
      return fail(output, 'the stack', String((err as Error).stack ?? err));
    }
    if (supervisor.parts.some((p) => p.running)) output.info(`${err.part} failed to start; stopping what was started`);
    await stopAll(launch);
    // Last, so it is the line the user sees.
    return fail(output, err.part, `${err.message}${err.attempts > 1 ? ` (${err.attempts} attempts in a row)` : ''}`);
  }
}

async function startTemporalAndZipkin(launch: Launch, jar: string | undefined): Promise<void> {
  const { config, output, stack, supervisor, stop, dataDir } = launch;
  const t = config.temporal;
  const t0 = performance.now();
  // Beside Temporal: neither needs the other, and the JVM takes its time.
  if (jar) output.info(`starting zipkin (in memory, on 127.0.0.1:${config.traces!.zipkinPort})`);
  const zipkin = jar ? timed(startZipkin(config, jar, supervisor, output, stop)) : undefined;
  // Its failure is the start's failure, reported once the wait below reaches it.
  zipkin?.catch(() => undefined);
  output.info(
    t.mode === 'embedded'
      ? `starting temporal (dev server on ${stack.temporal.address}, ${config.dataDir}/temporal.db)`
      : t.mode === 'cluster'
        ? `starting the Temporal cluster (PostgreSQL, two history processes, matching, frontend on ${stack.temporal.address}, worker service, Web UI) in ${config.dataDir}`
        : `using the Temporal cluster at ${t.address} (TEMPORAL_ADDRESS is set: no dev server)`,
  );
  const temporal = await startTemporal(config, output, supervisor, {
    signal: stop,
    // The lock names the dev server, so that a launcher killed outright leaves a trace of it.
    onSpawn: (pid) => dataDir.setTemporalPid(pid),
  });
  stack.connect = temporal.connect;
  output.info(
    `temporal ready (${since(t0)}, namespace ${temporal.namespace}, retention ${ms(config.retentionMs, { long: true })})`,
  );
  if (zipkin) output.info(`zipkin ready (${seconds(await zipkin)})`);
}

/** One role after the other; the instances of one role (worker-1 and worker-2) together. */
async function startParts({ config, output, stack, supervisor, stop }: Launch): Promise<void> {
  for (const wave of byRole(stackParts(stack))) {
    await Promise.all(
      wave.map(async (part) => {
        const t = performance.now();
        output.info(`starting ${part.name}`);
        await supervisor
          .add({
            name: part.name,
            command: { entry: part.entry },
            env: part.env,
            ...(part.unsetEnv ? { unsetEnv: part.unsetEnv } : {}),
            ...(part.ready ? { ready: part.ready } : {}),
            readyTimeoutMs: config.startTimeoutMs,
            stopGraceMs: config.stopGraceMs,
            restart: RESTART_WITH_BACKOFF,
            onLine: (line, stream) => output.child(part.name, line, stream),
          })
          .start(stop);
        output.info(`${part.name} ready (${since(t)})`);
      }),
    );
  }
}

/** The banner, after a warning for each service outside operations call that does not answer (the launcher does not run them). */
async function announce(opts: RunOptions, stack: StackSpec, settings: ServiceSettings): Promise<void> {
  const { config, output } = opts;
  const outside = opts.outside ?? { operations: [], services: [] };
  const silent: string[] = [];
  for (const { name, url } of outside.services) {
    if (await answers(url)) continue;
    silent.push(name);
    output.warn(
      `the service ${name} (${displayOrigin(url)}) does not answer: start it, or its steps are retried until their deadline and then compensated`,
    );
  }
  output.raw(
    renderBanner(
      {
        config,
        settings,
        temporal: stack.temporal,
        services: stackParts(stack),
        readyMs: performance.now() - opts.startedAt,
        outside: { ...outside, silent },
        ...(stack.traces ? { traces: { ui: stack.traces.ui } } : {}),
      },
      output,
    ),
  );
}

/** Up until a signal, or until a part that died cannot be started again. */
async function keepUp(launch: Launch): Promise<number> {
  const { output, supervisor, stop } = launch;
  const stopped = new Promise<'stop'>((resolve) => {
    if (stop.aborted) resolve('stop');
    else stop.addEventListener('abort', () => resolve('stop'), { once: true });
  });
  const event = await Promise.race([stopped, supervisor.gaveUp]);
  if (event === 'stop' || stop.aborted) {
    await stopAll(launch);
    output.info('stopped');
    return 0;
  }
  const { part, error } = event;
  output.warn(`${part.name} could not be restarted; stopping everything`);
  await stopAll(launch);
  output.fatal(`could not restart ${part.name}: ${error.message} (${error.attempts} attempts in a row); stopped the rest`);
  return 1;
}

/** What the supervisor did on its own, as the user sees it. */
function report(event: PartEvent, output: Output): void {
  const { name } = event.part;
  switch (event.type) {
    case 'crashed':
      output.warn(`${name} ${describeExit(event.exit)} unexpectedly; restarting it in ${seconds(event.restartInMs ?? 0)}`);
      break;
    case 'retrying':
      output.warn(
        `${name} did not start: ${event.reason}; trying again in ${seconds(event.retryInMs)} ` +
          `(attempt ${event.failures + 1} of ${RESTART_WITH_BACKOFF.maxFailedStarts})`,
      );
      break;
    case 'restarted':
      output.info(`${name} ready again after a restart`);
      break;
    case 'gave-up':
      // The main loop stops the stack and says why.
      break;
  }
}

function zipkinClaims(config: LauncherConfig): PortClaim[] {
  if (!config.traces) return [];
  const port = config.traces.zipkinPort;
  return [{ part: 'zipkin', what: 'Zipkin UI and span endpoint', host: '127.0.0.1', port, variable: 'ZIPKIN_PORT' }];
}

/** Resolves with how long `start` took, in milliseconds. */
async function timed(start: Promise<void>): Promise<number> {
  const t0 = performance.now();
  await start;
  return performance.now() - t0;
}

function temporalClaims(config: LauncherConfig, cluster: ClusterDefinition | undefined): PortClaim[] {
  const t = config.temporal;
  if (t.mode === 'embedded') {
    return [
      { part: 'temporal', what: 'Temporal gRPC', host: t.host, port: t.port, variable: 'TEMPORAL_PORT' },
      { part: 'temporal', what: 'Temporal Web UI', host: t.host, port: t.uiPort, variable: 'TEMPORAL_UI_PORT' },
    ];
  }
  if (!cluster) return [];
  return cluster.processes.flatMap((p) =>
    p.ports.map((use) => ({
      part: use.part,
      what: use.what,
      host: '127.0.0.1',
      port: use.port,
      variable: use.port === cluster.ports.ui ? 'TEMPORAL_UI_PORT' : "TEMPORAL_PORT, which the cluster's ports follow",
    })),
  );
}

/** Consecutive parts of one role (`worker-1`, `worker-2`) in one group, in order. */
function byRole(parts: StackPart[]): StackPart[][] {
  const waves: StackPart[][] = [];
  const role = (name: string) => name.replace(/-\d+$/, '');
  for (const part of parts) {
    const last = waves.at(-1);
    if (last && role(last[0]!.name) === role(part.name)) last.push(part);
    else waves.push([part]);
  }
  return waves;
}

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}

function since(t: number): string {
  return seconds(performance.now() - t);
}
