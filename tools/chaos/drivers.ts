// The drivers of a chaos run's fault schedule: each sandbox fault window switched on and
// off at its planned times, and each process fault (a kill, a restart, a stop of Temporal
// or PostgreSQL) fired at its time on the part it names, one at a time per part.
import { setTimeout as sleep } from 'node:timers/promises';
import { NO_FAULTS } from '../../downstream/shared/faults.js';
import type { ProcessFault, SandboxFaultWindow } from './fault-schedule.js';
import type { ClientContext } from './records.js';
import type { FaultTally } from './report.js';
import { retryWhile, type ChaosLog, type ChaosStack } from './stack.js';

/** Sleeps until the epoch time `at`; not at all when it has passed (a late start is not made later). */
export function sleepUntil(at: number): Promise<void> {
  return sleep(Math.max(0, at - Date.now()));
}

/**
 * One sandbox fault window: on at its start, off at its end. The stack remembers the faults
 * in force so that a sandbox killed and restarted gets them again, so a window always ends
 * by switching its own faults off (only its own: a crash window may outlast its plan and
 * overlap the next one), also when it never started.
 *
 * A crash window is a single event more than a span: its service dies at a commit and comes
 * back without faults. So it waits for its service when that is down at the planned start
 * (a planned kill restarting it, slow on a loaded machine), and stays armed past its planned
 * end until the service has crashed once, as long as the fault phase lasts.
 */
export async function driveWindow(
  stack: Pick<ChaosStack, 'setFaults' | 'counts'>,
  w: SandboxFaultWindow,
  loadStart: number,
  tally: FaultTally,
  faultsOn: () => boolean,
  log: ChaosLog,
): Promise<void> {
  await sleepUntil(loadStart + w.atMs);
  if (!faultsOn()) return;
  const crash = w.fault === 'crash';
  const plannedEnd = loadStart + w.untilMs;
  /** The window starts once the service answers: until its planned end, or for a crash the fault phase's. */
  const stillTrying = () => (crash ? faultsOn() : Date.now() + 500 < plannedEnd);
  const off = Object.fromEntries(Object.keys(w.faults).map((k) => [k, NO_FAULTS[k as keyof typeof NO_FAULTS]]));
  const crashes = () => stack.counts.crashedAfterCommit[w.service];
  const crashesBefore = crashes();

  const applied = await retryWhile(() => stack.setFaults(w.service, w.faults), stillTrying, 500).then(
    () => true,
    (err: unknown) => {
      log(`fault window on ${w.service} could not be applied: ${String(err)}`);
      return false;
    },
  );
  if (applied) {
    tally[`${w.fault}Windows`]++;
    const forMs = Math.max(0, plannedEnd - Date.now());
    log(`fault on: ${w.service} ${w.fault} ${JSON.stringify(w.faults)} for ${(forMs / 1000).toFixed(1)} s`);
    await sleep(forMs);
    if (crash && crashes() === crashesBefore) {
      log(`${w.service} has not crashed yet: its crash window stays armed until it does or the faults stop`);
      while (crashes() === crashesBefore && faultsOn()) await sleep(250);
    }
  }
  // A service that is down now comes back without faults; the stack's record is what matters.
  await stack.setFaults(w.service, off).catch(() => undefined);
}

export async function driveProcesses(
  stack: ChaosStack,
  events: ProcessFault[],
  loadStart: number,
  tally: FaultTally,
  ctx: ClientContext,
  log: ChaosLog,
): Promise<void> {
  // Each event fires at its planned time; events on the same process wait for each other
  // (a worker still bundling its workflows is not killed twice), others run alongside. One
  // that waited past the end of the fault phase still fires: every planned crash happens.
  const busy = new Map<string, Promise<void>>();
  await Promise.all(
    events.map(async (ev) => {
      await sleepUntil(loadStart + ev.atMs);
      const mine = (busy.get(partOf(ev)) ?? Promise.resolve()).then(() =>
        fire(stack, ev, tally, ctx, log).catch((err: unknown) =>
          log(`process fault ${ev.kind} on ${partOf(ev)} failed: ${String(err)}`),
        ),
      );
      busy.set(partOf(ev), mine);
      await mine;
    }),
  );
}

function count(tally: FaultTally, ev: ProcessFault, result: { inFlight?: number; downMs: number }): void {
  tally.processes[ev.kind] = (tally.processes[ev.kind] ?? 0) + 1;
  if (result.inFlight !== undefined) (tally.inFlightAtKill[ev.kind] ??= []).push(result.inFlight);
  (tally.downMs[ev.kind] ??= []).push(result.downMs);
}

/** Stopped now (SIGKILL unless said otherwise), started again by the schedule after `pauseMs`; how long it was down. */
async function stopAndStart(
  stack: ChaosStack,
  name: string,
  pauseMs: number,
  signal: NodeJS.Signals = 'SIGKILL',
): Promise<number> {
  const down = Date.now();
  await stack.stopPart(name, signal);
  await sleepUntil(down + pauseMs);
  await stack.startPart(name);
  return Date.now() - down;
}

/** Temporal stopped for `downMs`: meanwhile readiness must say so, so that a load balancer takes the instance out. */
async function restartTemporal(
  stack: ChaosStack,
  name: string,
  downMs: number,
  tally: FaultTally,
  ctx: ClientContext,
): Promise<number> {
  const down = Date.now();
  await stack.stopPart(name);
  for (const url of ctx.apiUrls) {
    const status = await fetch(`${url}/readyz`, { signal: AbortSignal.timeout(10_000) })
      .then((r) => String(r.status))
      .catch(() => 'network');
    tally.readyzWhileTemporalDown[status] = (tally.readyzWhileTemporalDown[status] ?? 0) + 1;
    if (status === '200')
      ctx.violations.push({
        rule: 'API: /readyz reports Temporal down',
        message: `${url}/readyz answered 200 while Temporal was stopped`,
      });
  }
  await sleepUntil(down + downMs);
  await stack.startPart(name);
  return Date.now() - down;
}

async function fire(stack: ChaosStack, ev: ProcessFault, tally: FaultTally, ctx: ClientContext, log: ChaosLog): Promise<void> {
  const name = partOf(ev);
  switch (ev.kind) {
    case 'worker_kill':
    case 'history_kill':
      log(`SIGKILL ${name}; restarting it in ${ev.restartAfterMs} ms`);
      count(tally, ev, { downMs: await stopAndStart(stack, name, ev.restartAfterMs) });
      return log(`${name} ${ev.kind === 'worker_kill' ? 'ready' : 'serving'} again`);
    case 'api_restart':
      log(`restarting ${name} (SIGTERM, then start on the same port)`);
      count(tally, ev, { downMs: await stopAndStart(stack, name, 0, 'SIGTERM') });
      return log(`${name} listening again`);
    case 'api_kill':
    case 'bank_kill':
    case 'reservations_kill': {
      // Killed with a request in flight: the supervisor restarts it on the same port and file.
      const result = await stack.kill(name, { afterRequestMs: ev.afterRequestMs });
      count(tally, ev, result);
      return log(
        `SIGKILL ${name} with ${result.inFlight} requests in flight; the supervisor had it up again after ${seconds(result.downMs)}`,
      );
    }
    case 'temporal_kill':
    case 'frontend_kill': {
      const { downMs } = await stack.kill(name);
      count(tally, ev, { downMs });
      return log(`SIGKILL ${name}; the supervisor had it up again after ${seconds(downMs)}`);
    }
    case 'postgres_restart':
      log(`stopping PostgreSQL (${ev.mode} shutdown) for ${ev.downMs} ms`);
      count(tally, ev, { downMs: await stopAndStart(stack, name, ev.downMs, ev.mode === 'fast' ? 'SIGINT' : 'SIGQUIT') });
      return log('PostgreSQL accepting connections again');
    case 'temporal_restart': {
      log(`stopping Temporal for ${ev.downMs} ms`);
      const downMs = await restartTemporal(stack, name, ev.downMs, tally, ctx);
      count(tally, ev, { downMs });
      return log(`Temporal back on the same database file after ${seconds(downMs)}`);
    }
  }
}

/** The part a process fault acts on, by its name in the stack. */
function partOf(ev: ProcessFault): string {
  switch (ev.kind) {
    case 'worker_kill':
      return `worker-${ev.worker}`;
    case 'api_restart':
    case 'api_kill':
      return `api-${ev.api}`;
    case 'bank_kill':
      return 'bank';
    case 'reservations_kill':
      return 'reservations';
    case 'temporal_restart':
    case 'temporal_kill':
      return 'temporal';
    case 'history_kill':
      return `temporal-history-${ev.history + 1}`;
    case 'frontend_kill':
      return 'temporal-frontend';
    case 'postgres_restart':
      return 'postgres';
  }
}

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}
