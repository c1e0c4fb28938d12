// Brings the stack up part by part (Temporal, bank, worker, API), each waited for before
// the next, then supervises it: a signal stops everything in reverse order; a part that
// dies on its own takes the rest down with a non-zero exit.
import ms from 'ms';
import type { LauncherConfig } from './options.js';
import type { Output } from './output.js';
import { renderBanner } from './banner.js';
import { claimDataDir, resetDataDir, takeOverDataDir } from './data-dir.js';
import { assertPortsFree, PortBusyError, type PortClaim } from './ports.js';
import { AbortedError, describeExit, killLeftovers, sleep, startService, StartError, type ExitInfo, type Part } from './service.js';
import { serviceSpecs, validateServices, type StackSpec } from './services.js';
import { startTemporal, type TemporalPart } from './temporal.js';

export interface RunOptions {
  config: LauncherConfig;
  output: Output;
  reset: boolean;
  faults: boolean;
  /** performance.now() when the launcher started: the banner reports the time to ready. */
  startedAt: number;
}

/** Exit codes: 0 stopped on request, 1 a part failed, 130 forced by a second signal. */
export async function runStack(opts: RunOptions): Promise<number> {
  const { config, output } = opts;
  const stack: StackSpec = {
    config,
    faults: opts.faults,
    prettyLogs: output.tty,
    temporal:
      config.temporal.mode === 'embedded'
        ? { address: `${config.temporal.host}:${config.temporal.port}`, namespace: 'default', uiUrl: `http://localhost:${config.temporal.uiPort}`, embedded: true }
        : { address: config.temporal.address, namespace: config.temporal.namespace, uiUrl: config.temporal.uiUrl, embedded: false },
  };
  // Every child's settings are checked before anything starts (ConfigError → exit 2).
  const settings = validateServices(stack);

  // Signals: the first one stops the stack gracefully, a later one forces. A repeat within
  // half a second is the same Ctrl-C relayed twice (npm and tsx both forward it), not a
  // person insisting.
  const stopRequest = new AbortController();
  const parts: Part[] = [];
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
    for (const part of [...parts].reverse()) part.kill();
    killLeftovers('SIGKILL');
    process.exit(130);
  };
  const signals: NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];
  for (const s of signals) process.on(s, onSignal);

  try {
    const fail = (part: string, reason: string) => {
      output.fatal(`could not start ${part}: ${reason}`);
      return 1;
    };

    const note = await takeOverDataDir(config.dataDir);
    if (note) output.warn(note);
    // Ports next, all of them: a clash is reported before anything is started.
    const claims: PortClaim[] = [...temporalClaims(config), ...serviceSpecs(stack).flatMap((s) => s.ports)];
    try {
      await assertPortsFree(claims);
    } catch (err) {
      if (err instanceof PortBusyError) return fail(err.claim.part, err.message);
      throw err;
    }
    if (opts.reset) {
      resetDataDir(config.dataDir, config.root);
      output.info(`--reset: deleted ${config.dataDir}`);
    }
    const dataDir = claimDataDir(config.dataDir);
    const releaseDataDir = dataDir.release;

    let temporal: TemporalPart | undefined;
    try {
      const t0 = performance.now();
      output.info(
        config.temporal.mode === 'embedded'
          ? `starting temporal (dev server on ${stack.temporal.address}, ${config.dataDir}/temporal.db)`
          : `using the Temporal cluster at ${config.temporal.address} (TEMPORAL_ADDRESS is set: no dev server)`,
      );
      temporal = await startTemporal(config, output, stopRequest.signal);
      parts.push(temporal);
      dataDir.setTemporalPid(temporal.pid);
      stack.connection = () => temporal?.connection;
      output.info(`temporal ready (${since(t0)}, namespace ${temporal.namespace}, retention ${ms(config.retentionMs, { long: true })})`);

      for (const spec of serviceSpecs(stack)) {
        const t = performance.now();
        output.info(`starting ${spec.name}`);
        parts.push(
          await startService(spec, {
            root: config.root,
            output,
            timeoutMs: config.startTimeoutMs,
            stopGraceMs: config.stopGraceMs,
            signal: stopRequest.signal,
          }),
        );
        output.info(`${spec.name} ready (${since(t)})`);
      }
      await temporal.closeConnection();
    } catch (err) {
      if (err instanceof AbortedError || stopRequest.signal.aborted) {
        await stopAll(parts, output);
        releaseDataDir();
        output.info('stopped before the stack was ready');
        return 0;
      }
      const [part, reason] = err instanceof StartError ? [err.part, err.message] : ['the stack', String((err as Error).stack ?? err)];
      if (parts.length > 0) output.info(`${part} failed to start; stopping what was started`);
      await stopAll(parts, output);
      releaseDataDir();
      // Last, so it is the line the user sees.
      return fail(part, reason);
    }

    output.raw(
      renderBanner(
        { config, settings, temporal: stack.temporal, services: serviceSpecs(stack), readyMs: performance.now() - opts.startedAt },
        output,
      ),
    );

    // Supervise until a signal or a part's unexpected exit.
    const stopped = new Promise<'stop'>((resolve) => {
      if (stopRequest.signal.aborted) resolve('stop');
      else stopRequest.signal.addEventListener('abort', () => resolve('stop'), { once: true });
    });
    const died = parts.map((part) => part.exited.then((info): [Part, ExitInfo] => [part, info]));
    const event = await Promise.race([stopped, ...died]);
    if (event === 'stop') {
      await stopAll(parts, output);
      releaseDataDir();
      output.info('stopped');
      return 0;
    }
    const [part, info] = event;
    // In a terminal, Ctrl-C also reaches the dev server directly (it shares the launcher's
    // process group), so it may exit a moment before our own SIGINT handler runs.
    await sleep(300);
    if (stopRequest.signal.aborted) {
      await stopAll(parts, output);
      releaseDataDir();
      output.info('stopped');
      return 0;
    }
    const why = `${part.name} ${describeExit(info)} unexpectedly`;
    output.warn(`${why}; stopping everything`);
    await stopAll(parts.filter((p) => p !== part), output);
    releaseDataDir();
    output.fatal(`${why} (see its output above); stopped the rest`);
    return 1;
  } finally {
    for (const s of signals) process.off(s, onSignal);
  }
}

function temporalClaims(config: LauncherConfig): PortClaim[] {
  const t = config.temporal;
  if (t.mode !== 'embedded') return [];
  return [
    { part: 'temporal', what: 'Temporal gRPC', host: t.host, port: t.port, variable: 'TEMPORAL_PORT' },
    { part: 'temporal', what: 'Temporal Web UI', host: t.host, port: t.uiPort, variable: 'TEMPORAL_UI_PORT' },
  ];
}

/** Stops the parts in reverse start order, each within its grace period. */
async function stopAll(parts: Part[], output: Output): Promise<void> {
  for (const part of [...parts].reverse()) {
    if (!part.running()) continue;
    const t = performance.now();
    await part.stop();
    const info = await Promise.race([part.exited, Promise.resolve(undefined)]);
    output.info(`${part.name} stopped (${since(t)}${info?.signal === 'SIGKILL' ? ', killed after its grace period' : ''})`);
  }
}

function since(t: number): string {
  return `${((performance.now() - t) / 1000).toFixed(1)} s`;
}
