// The stack of a chaos run, all real processes on loopback run by the repository's one
// supervisor: Temporal (stack-temporal.ts), the bank and the reservation service with
// SANDBOX_FAULTS=1, two workers on one task queue, two API instances. The run kills and
// restarts them on purpose; a process that dies on its own is restarted after a second and
// counted. Each process writes to a log file in the run's directory, and the structured
// fields of its lines are read as they are printed (log-taps.ts).
import { chmodSync, createWriteStream, mkdirSync, type WriteStream } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { TEMPORAL_CONNECTION_VARS } from '../../common/temporal.js';
import { NO_FAULTS, type FaultsPatch } from '../../downstream/shared/faults.js';
import { loopbackUrl, PART_ENTRY, partEnv, type StackDescription } from '../stack-env.js';
import { describeExit } from '../supervisor/child.js';
import type { Part, PartSpec, RestartPolicy } from '../supervisor/part.js';
import { freePort } from '../supervisor/ports.js';
import { lineProbe } from '../supervisor/ready.js';
import { Supervisor } from '../supervisor/supervisor.js';
import type { Topology } from './fault-schedule.js';
import {
  countDownstreamFailure,
  countFault,
  InFlight,
  logEntryOf,
  newLogCounts,
  type LogCounts,
  type LogEntry,
} from './log-taps.js';
import { CHAOS_TIMINGS } from './settings.js';
import { startChaosTemporal, type ChaosTemporal } from './stack-temporal.js';
import { openLedgers, putFaults, type InitialLedgers } from './sandbox-admin.js';
import { SERVICES, type Service } from './vocabulary.js';

const TASK_QUEUE = 'retrysafe-chaos';
const READY_TIMEOUT_MS = 180_000;

/** A process that dies on its own comes back a second later, whatever happened before. */
const REVIVE: RestartPolicy = { maxFailedStarts: 3, initialDelayMs: 1_000, maxDelayMs: 1_000, stableAfterMs: 0 };

/**
 * Runs `attempt` until it succeeds; after a failure it tries again in `pauseMs` while
 * `keepTrying()` holds, and throws the last error once it does not.
 */
export async function retryWhile<T>(attempt: () => Promise<T>, keepTrying: () => boolean, pauseMs: number): Promise<T> {
  for (;;) {
    try {
      return await attempt();
    } catch (err) {
      if (!keepTrying()) throw err;
      await sleep(pauseMs);
    }
  }
}

export type ChaosLog = (line: string) => void;

/** What a kill found and how long the part took to come back. */
export interface KillResult {
  /** POST requests the process had received and not answered when it was killed (as it logged them). */
  inFlight: number;
  /** From the kill until it was up again (its restart's readiness included). */
  downMs: number;
}

export interface ChaosStack extends InitialLedgers {
  topology: Topology;
  dir: string;
  temporalAddress: string;
  bankUrl: string;
  reservationsUrl: string;
  apiUrls: [string, string];
  counts: LogCounts;
  /** Exits nobody planned: a process that died on its own (the run's own kills are not counted). */
  unexpectedExits(): Record<string, number>;
  /** Records `faults` as in force on `service` (a restarted process gets them again), then sets them. */
  setFaults(service: Service, faults: FaultsPatch): Promise<void>;
  clearFaults(): Promise<void>;
  /**
   * SIGKILL now, or (`afterRequestMs`) once the part has received its next request plus
   * that pause, so that the kill cuts a request in flight; then waits until the supervisor
   * has it up again.
   */
  kill(name: string, opts?: { afterRequestMs?: number }): Promise<KillResult>;
  /** Stops a part (its stop signal, or `signal`); it stays down until startPart(). */
  stopPart(name: string, signal?: NodeJS.Signals): Promise<void>;
  startPart(name: string): Promise<void>;
  /** Parts by name: bank, reservations, worker-0/1, api-0/1, and temporal or the cluster's processes. */
  running(name: string): boolean;
  /** Every part running (after the fault phase): restarts what is down, in start order. */
  ensureAllUp(): Promise<void>;
  stop(): Promise<void>;
}

/** Extra variables for the workers and the APIs (the completion webhooks' settings). */
export interface ChaosAppEnv {
  worker?: Record<string, string>;
  api?: Record<string, string>;
}

/** Whether a sandbox's injected faults stop its requests before they commit. */
function holdsRequests(faults: FaultsPatch): boolean {
  return Number(faults.delayMs ?? 0) > 0 || faults.down === true || Number(faults.failBeforeCommit ?? 0) > 0;
}

export async function startChaosStack(
  dir: string,
  log: ChaosLog,
  topology: Topology,
  appEnv: ChaosAppEnv = {},
): Promise<ChaosStack> {
  mkdirSync(dir, { recursive: true });
  // PostgreSQL runs as its own user when we are root: it must be able to reach its folder.
  chmodSync(dir, 0o755);
  const logDir = join(dir, 'logs');
  mkdirSync(logDir, { recursive: true });
  const files: WriteStream[] = [];
  const logFile = (name: string) => {
    const file = createWriteStream(join(logDir, `${name}.log`), { flags: 'a' });
    files.push(file);
    return file;
  };
  /** Kills by this run, per part, that the supervisor turned into restarts. */
  const planned = new Map<string, number>();
  /** Parts being killed by the run right now: their crash is no news. */
  const killing = new Set<string>();

  const supervisor = new Supervisor((event) => {
    const name = event.part.name;
    if (event.type === 'crashed' && !killing.has(name))
      log(`${name} exited on its own (${describeExit(event.exit)}); restarting it`);
    if (event.type === 'retrying') log(`${name} did not start again: ${event.reason}; retrying`);
    if (event.type === 'gave-up') log(`${name} restart failed: ${event.error.message}`);
  });
  const [bankPort, reservationsPort, api0Port, api1Port] = await Promise.all(Array.from({ length: 4 }, () => freePort()));

  let temporal: ChaosTemporal;
  try {
    temporal = await startChaosTemporal({
      dir,
      topology,
      supervisor,
      revive: REVIVE,
      readyTimeoutMs: READY_TIMEOUT_MS,
      logFile,
      log,
    });
  } catch (err) {
    await supervisor.stopAll();
    await Promise.all(files.map((f) => new Promise((resolve) => f.end(resolve))));
    throw err;
  }
  const temporalAddress = temporal.address;

  const counts = newLogCounts();
  const sandboxTap = (service: Service) => (entry: LogEntry) => {
    // Its own crash is not news: the supervisor's restart of it is planned.
    if (countFault(counts, service, entry) === 'crashAfterCommit') planned.set(service, (planned.get(service) ?? 0) + 1);
  };
  const workerTap = (entry: LogEntry) => countDownstreamFailure(counts, entry);
  const inFlight = new Map<string, InFlight>();

  /** A Node part whose output goes to its log file and through `tap`. */
  const part = (
    name: string,
    entry: string,
    env: Record<string, string>,
    readyText: string,
    tap: (entry: LogEntry) => void,
    slowestRequestMs = 10_000,
  ): Part => {
    const file = logFile(name);
    const requests = new InFlight(slowestRequestMs);
    inFlight.set(name, requests);
    const spec: PartSpec = {
      name,
      command: { entry },
      // Info level: the run reads the structured fields of the lines it prints.
      env: { LOG_PRETTY: '0', LOG_LEVEL: 'info', ...env },
      // The children talk to this run's Temporal only: no cluster credentials leak in.
      unsetEnv: TEMPORAL_CONNECTION_VARS,
      ready: lineProbe(readyText),
      readyTimeoutMs: READY_TIMEOUT_MS,
      // A graceful stop that hangs (a worker draining a stuck activity) is cut short.
      stopGraceMs: 15_000,
      restart: REVIVE,
      onSpawn: () => {
        requests.reset();
        file.write(`--- started at ${new Date().toISOString()}\n`);
      },
      onLine: (line) => {
        file.write(line + '\n');
        const entry = logEntryOf(line);
        if (!entry) return;
        requests.feed(entry);
        tap(entry);
      },
    };
    return supervisor.add(spec);
  };

  const stack: StackDescription = {
    temporal: { address: temporalAddress, namespace: 'default' },
    taskQueue: TASK_QUEUE,
    bank: { host: '127.0.0.1', port: bankPort!, db: join(dir, 'bank.db') },
    reservations: { host: '127.0.0.1', port: reservationsPort!, db: join(dir, 'reservations.db') },
    faults: true,
    worker: { downstreamTimeout: String(CHAOS_TIMINGS.downstreamTimeoutMs), metricsAddress: 'off' },
    // Both instances count the tenants' rates in one store, as instances of one deployment do:
    // the cluster's PostgreSQL, or one file beside the dev server.
    api: {
      host: '127.0.0.1',
      ...(temporal.limitsUrl ? { limitsUrl: temporal.limitsUrl } : { limitsDb: join(dir, 'limits.db') }),
    },
  };
  const bankUrl = loopbackUrl(bankPort!);
  const reservationsUrl = loopbackUrl(reservationsPort!);
  const bank = part(
    'bank',
    PART_ENTRY.bank,
    partEnv(stack, 'bank'),
    'bank listening at',
    sandboxTap('bank'),
    // An injected delay holds a request at most a few seconds.
    10_000,
  );
  const reservations = part(
    'reservations',
    PART_ENTRY.reservations,
    partEnv(stack, 'reservations'),
    'reservations listening at',
    sandboxTap('reservations'),
  );
  const workers = ([0, 1] as const).map((i) =>
    part(`worker-${i}`, PART_ENTRY.worker, partEnv(stack, 'worker', appEnv.worker), 'worker ready', workerTap),
  ) as [Part, Part];
  const apiPorts = [api0Port!, api1Port!] as const;
  const apis = ([0, 1] as const).map((i) =>
    part(
      `api-${i}`,
      PART_ENTRY.api,
      partEnv({ ...stack, api: { ...stack.api, port: apiPorts[i] } }, 'api', {
        RETRYSAFE_STEP_DEADLINE: String(CHAOS_TIMINGS.stepDeadlineMs),
        RETRYSAFE_ATTENTION_AFTER: String(CHAOS_TIMINGS.attentionAfterMs),
        ...appEnv.api,
      }),
      'api listening',
      () => undefined,
      // A POST waits for the outcome (Prefer: wait, at most 60 s).
      70_000,
    ),
  ) as [Part, Part];

  const closeFiles = async () => {
    await temporal.closeLogs();
    await Promise.all(files.map((f) => new Promise((resolve) => f.end(resolve))));
  };
  try {
    await Promise.all([bank.start(), reservations.start()]);
    // Workers bundle the workflows with webpack at start: one after the other on 2 cores.
    await Promise.all([workers[0].start(), apis[0].start(), apis[1].start()]);
    await workers[1].start();
  } catch (err) {
    await supervisor.stopAll();
    await closeFiles();
    throw err;
  }

  const { initialBalances, initialStock } = await openLedgers(bankUrl, reservationsUrl);

  const sandboxUrl = (service: Service) => (service === 'bank' ? bankUrl : reservationsUrl);
  const currentFaults: Record<Service, FaultsPatch> = { bank: {}, reservations: {} };
  const setFaults = async (service: Service, faults: FaultsPatch) => {
    currentFaults[service] = { ...currentFaults[service], ...faults };
    await putFaults(sandboxUrl(service), faults);
  };
  const byName = (name: string): Part => {
    const found = supervisor.parts.find((p) => p.name === name);
    if (!found) throw new Error(`no part named ${name}`);
    return found;
  };

  return {
    topology,
    dir,
    temporalAddress,
    bankUrl,
    reservationsUrl,
    apiUrls: [`http://127.0.0.1:${apiPorts[0]}`, `http://127.0.0.1:${apiPorts[1]}`],
    counts,
    initialBalances,
    initialStock,
    unexpectedExits: () =>
      Object.fromEntries(
        supervisor.parts.map((p) => [p.name, p.unexpectedExits - (planned.get(p.name) ?? 0)] as const).filter(([, n]) => n > 0),
      ),
    setFaults,
    async clearFaults() {
      // A sandbox may crash on its own until this lands (crashAfterCommit): while the
      // supervisor brings it back, the PUT is refused, and tried again until it answers.
      const until = Date.now() + READY_TIMEOUT_MS;
      await Promise.all(
        SERVICES.map((service) =>
          retryWhile(
            () => setFaults(service, NO_FAULTS),
            () => Date.now() < until,
            250,
          ),
        ),
      );
    },
    async kill(name, opts = {}) {
      const target = byName(name);
      const requests = inFlight.get(name);
      const service = SERVICES.find((s) => s === name);
      if (opts.afterRequestMs !== undefined && requests) {
        // Until a request is in flight at the moment of the kill (bounded: a part nobody calls is killed anyway).
        const until = Date.now() + 30_000;
        // A sandbox holding its requests before the commit (an injected delay, downtime or
        // failure) would only ever be cut there: wait for the window to end, so that the kill
        // can land between a request's commit and its answer.
        while (service && holdsRequests(currentFaults[service]) && Date.now() < until) await sleep(100);
        do {
          await requests.busy(until - Date.now());
          await sleep(opts.afterRequestMs);
        } while (requests.count() === 0 && Date.now() < until);
      }
      // A sandbox that crashed on its own (crashAfterCommit) is killed once it is back.
      const backBy = Date.now() + READY_TIMEOUT_MS;
      while (!target.running && Date.now() < backBy) await sleep(100);
      const pid = target.pid;
      const spawns = target.spawns;
      if (pid === undefined || !target.running) throw new Error(`${name} is not running`);
      const cut = requests?.count() ?? 0;
      planned.set(name, (planned.get(name) ?? 0) + 1);
      killing.add(name);
      const killedAt = Date.now();
      try {
        process.kill(pid, 'SIGKILL');
        // The supervisor sees the exit as a crash and starts a new process after its back-off.
        const deadline = killedAt + READY_TIMEOUT_MS;
        while (!(target.running && target.spawns > spawns)) {
          if (Date.now() > deadline) throw new Error(`${name} did not come back within ${READY_TIMEOUT_MS / 1000} s`);
          await sleep(100);
        }
      } finally {
        killing.delete(name);
      }
      const downMs = Date.now() - killedAt;
      // A sandbox keeps its injected faults in memory: the new process gets the current ones.
      // Best effort: with a crash armed, a commit racing this PUT can kill the process before
      // it answers. The kill has happened all the same, and the next process starts clean.
      if (service)
        await setFaults(service, currentFaults[service]).catch((err: unknown) =>
          log(`${name} is back, but did not take its faults again: ${String(err)}`),
        );
      return { inFlight: cut, downMs };
    },
    async stopPart(name, signal) {
      await byName(name).stop(signal ? { signal } : {});
    },
    startPart: (name) => byName(name).start(),
    running: (name) => byName(name).running,
    async ensureAllUp() {
      for (const p of supervisor.parts) if (!p.running) await p.start();
    },
    async stop() {
      // Reverse order: APIs and workers first, then the sandboxes, Temporal last.
      await supervisor.stopAll();
      await closeFiles();
    },
  };
}
