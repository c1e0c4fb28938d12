// The stack of a chaos run, all real processes on loopback run by the repository's one
// supervisor: Temporal (the embedded dev server on its own SQLite file, or the
// multi-process cluster on PostgreSQL), the bank and the reservation service with
// SANDBOX_FAULTS=1, two workers on one task queue, two API instances. The run kills and
// restarts them on purpose; a process that dies on its own is restarted after a second and
// counted. Each process writes to a log file in the run's directory, and the structured
// fields of its lines are read as they are printed: the sandboxes' `fault_injected` events
// (the ground truth of what fired), the workers' failed downstream calls, and every Node
// part's requests in flight. No message text is matched.
import { chmodSync, createWriteStream, mkdirSync, type WriteStream } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startDevServer } from '../../tools/dev-server.js';
import { LogEvent } from '../../common/log-events.js';
import { describeExit } from '../supervisor/child.js';
import type { Part, PartSpec, RestartPolicy } from '../supervisor/part.js';
import { freePort } from '../supervisor/ports.js';
import { lineProbe, sleep } from '../supervisor/ready.js';
import { Supervisor } from '../supervisor/supervisor.js';
import { TEMPORAL_CONNECTION_VARS } from '../../common/temporal.js';
import { defineCluster } from '../cluster/cluster.js';
import { findFreeBase } from '../cluster/ports.js';
import { superviseCluster } from '../cluster/supervise.js';
import { ensureTemporalCli } from '../../tools/temporal-cli.js';
import { NO_FAULTS, type FaultName, type FaultsPatch } from '../../downstream/shared/faults.js';
import { CHAOS_TIMINGS, type Topology } from './plan.js';
import { LEDGER, SERVICES, type Service } from './vocabulary.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const TASK_QUEUE = 'retrysafe-chaos';
const READY_TIMEOUT_MS = 180_000;
const DAY = 24 * 3_600_000;

/** A process that dies on its own comes back a second later, whatever happened before. */
const REVIVE: RestartPolicy = { maxFailedStarts: 3, initialDelayMs: 1_000, maxDelayMs: 1_000, stableAfterMs: 0 };
/**
 * The cluster's processes are more patient: one that dies while PostgreSQL is being
 * restarted cannot start again until it is back.
 */
const REVIVE_CLUSTER: RestartPolicy = { maxFailedStarts: 10, initialDelayMs: 1_000, maxDelayMs: 5_000, stableAfterMs: 0 };

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

/** What the children reported, in structured fields, that the report counts. */
export interface LogCounts {
  /** Effects committed whose answer the sandbox then destroyed (dropResponseAfterCommit). */
  droppedResponses: Record<Service, number>;
  /** Effects committed after which the sandbox killed itself before answering (crashAfterCommit). */
  crashedAfterCommit: Record<Service, number>;
  /** 503 injected_failure before anything was done (failBeforeCommit). */
  failedBeforeCommit: Record<Service, number>;
  /** Connections reset while the service was `down`. */
  refusedWhileDown: Record<Service, number>;
  /** Requests held by an injected delay before their commit (delayMs). */
  delayed: Record<Service, number>;
  /**
   * The workers' downstream calls that failed, by how: `unavailable` (a timeout, a reset, a
   * 5xx: retried with the same key) or `refused` (a business error: final).
   */
  downstreamCallsFailed: Record<string, number>;
}

/** Which count each fault a sandbox reports goes to. */
const COUNT_OF_FAULT: Record<FaultName, Exclude<keyof LogCounts, 'downstreamCallsFailed'>> = {
  dropResponseAfterCommit: 'droppedResponses',
  crashAfterCommit: 'crashedAfterCommit',
  failBeforeCommit: 'failedBeforeCommit',
  down: 'refusedWhileDown',
  delayMs: 'delayed',
};

/** The fields of a JSON log line that the run reads; anything else a line holds is ignored. */
interface LogEntry {
  event?: unknown;
  fault?: unknown;
  result?: unknown;
  reqId?: unknown;
  req?: { method?: unknown };
}

/** A log line as its fields, or undefined for a line that is not a JSON object (a banner, a stack trace). */
export function logEntryOf(line: string): LogEntry | undefined {
  if (!line.startsWith('{')) return undefined;
  try {
    const entry = JSON.parse(line) as unknown;
    return entry !== null && typeof entry === 'object' && !Array.isArray(entry) ? (entry as LogEntry) : undefined;
  } catch {
    return undefined;
  }
}

export function newLogCounts(): LogCounts {
  const perService = () => Object.fromEntries(SERVICES.map((s) => [s, 0])) as Record<Service, number>;
  return {
    droppedResponses: perService(),
    crashedAfterCommit: perService(),
    failedBeforeCommit: perService(),
    refusedWhileDown: perService(),
    delayed: perService(),
    downstreamCallsFailed: {},
  };
}

/**
 * Counts a sandbox's line when it reports an injected fault; returns the fault, so the
 * caller can tell a crash (the process is about to die by its own hand) from the rest.
 */
export function countFault(counts: LogCounts, service: Service, entry: LogEntry): FaultName | undefined {
  if (entry.event !== LogEvent.faultInjected || typeof entry.fault !== 'string' || !Object.hasOwn(COUNT_OF_FAULT, entry.fault))
    return undefined;
  const fault = entry.fault as FaultName;
  counts[COUNT_OF_FAULT[fault]][service]++;
  return fault;
}

/** Counts a worker's line when it reports a failed downstream call. */
export function countDownstreamFailure(counts: LogCounts, entry: LogEntry): void {
  if (entry.event !== LogEvent.downstreamCallFailed) return;
  const how = typeof entry.result === 'string' ? entry.result : 'unknown';
  counts.downstreamCallsFailed[how] = (counts.downstreamCallsFailed[how] ?? 0) + 1;
}

export type ChaosLog = (line: string) => void;

/** What a kill found and how long the part took to come back. */
export interface KillResult {
  /** POST requests the process had received and not answered when it was killed (as it logged them). */
  inFlight: number;
  /** From the kill until it was up again (its restart's readiness included). */
  downMs: number;
}

export interface ChaosStack {
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
  initialBalances: Record<string, number>;
  initialStock: Record<string, number>;
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

/**
 * POST requests a Node part has received and not yet answered, from the `event` of its
 * request lines (received, then finished or cut). A request whose client gave up is
 * answered into the void without a line (a sandbox request held by an injected delay past
 * the worker's timeout), so one unanswered longer than the part ever takes counts as over.
 */
export class InFlight {
  private readonly open = new Map<string, number>();
  private readonly waiters = new Set<() => void>();

  constructor(private readonly staleAfterMs: number) {}

  feed(entry: LogEntry): void {
    if (typeof entry.reqId !== 'string') return;
    if (entry.event === LogEvent.requestReceived) {
      if (entry.req?.method !== 'POST') return;
      this.open.set(entry.reqId, Date.now());
      for (const check of [...this.waiters]) check();
    } else if (entry.event === LogEvent.requestFinished || entry.event === LogEvent.requestCut) {
      this.open.delete(entry.reqId);
    }
  }

  /** A new process: nothing of the old one is in flight any more. */
  reset(): void {
    this.open.clear();
  }

  count(): number {
    const since = Date.now() - this.staleAfterMs;
    return [...this.open.values()].filter((t) => t >= since).length;
  }

  /**
   * Resolves once a POST is in flight (checked after the output chunk that announced it,
   * which may also hold its answer), or after `timeoutMs`.
   */
  busy(timeoutMs: number): Promise<void> {
    if (this.count() > 0) return Promise.resolve();
    return new Promise((resolve) => {
      const check = () =>
        setImmediate(() => {
          if (this.count() > 0) done();
        });
      const done = () => {
        clearTimeout(timer);
        this.waiters.delete(check);
        resolve();
      };
      const timer = setTimeout(done, timeoutMs);
      this.waiters.add(check);
    });
  }
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

  let temporalAddress: string;
  let closeClusterLogs = () => Promise.resolve();
  try {
    if (topology === 'embedded') {
      const temporalLog = logFile('temporal');
      const temporal = await startDevServer({
        bin: ensureTemporalCli(),
        dbFile: join(dir, 'temporal.db'),
        port: await freePort(),
        headless: true,
        logLevel: 'error',
        retentionMs: DAY,
        onOutput: (line) => temporalLog.write(line + '\n'),
        readyTimeoutMs: 90_000,
        supervisor,
        restart: REVIVE,
      });
      temporalAddress = temporal.address;
    } else {
      // The same cluster as `npm run cluster`, on free ports, without the Web UI.
      const definition = defineCluster({
        root: ROOT,
        dataDir: join(dir, 'cluster'),
        basePort: await findFreeBase(),
        retentionMs: DAY,
        ui: false,
      });
      const cluster = await superviseCluster(definition, {
        supervisor,
        restart: REVIVE_CLUSTER,
        readyTimeoutMs: READY_TIMEOUT_MS,
        onStep: (step, { note, ms }) => {
          if (note !== undefined) log(`cluster ${step.name}: ${note} (${((ms ?? 0) / 1000).toFixed(1)} s)`);
        },
      });
      temporalAddress = definition.frontendAddress;
      closeClusterLogs = () => cluster.closeLogs();
    }
  } catch (err) {
    await supervisor.stopAll();
    await closeClusterLogs();
    await Promise.all(files.map((f) => new Promise((resolve) => f.end(resolve))));
    throw err;
  }

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
      env: { LOG_PRETTY: '0', ...env },
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

  const temporalEnv = { TEMPORAL_ADDRESS: temporalAddress, TEMPORAL_NAMESPACE: 'default' };
  const bankUrl = `http://127.0.0.1:${bankPort}`;
  const reservationsUrl = `http://127.0.0.1:${reservationsPort}`;
  const bank = part(
    'bank',
    'downstream/bank/server.ts',
    {
      BANK_HOST: '127.0.0.1',
      BANK_PORT: String(bankPort),
      BANK_DB: join(dir, 'bank.db'),
      SANDBOX_FAULTS: '1',
      LOG_LEVEL: 'info',
    },
    'bank listening at',
    sandboxTap('bank'),
    // An injected delay holds a request at most a few seconds.
    10_000,
  );
  const reservations = part(
    'reservations',
    'downstream/reservations/server.ts',
    {
      RESERVATIONS_HOST: '127.0.0.1',
      RESERVATIONS_PORT: String(reservationsPort),
      RESERVATIONS_DB: join(dir, 'reservations.db'),
      SANDBOX_FAULTS: '1',
      LOG_LEVEL: 'info',
    },
    'reservations listening at',
    sandboxTap('reservations'),
  );
  const workers = ([0, 1] as const).map((i) =>
    part(
      `worker-${i}`,
      'worker/main.ts',
      {
        ...temporalEnv,
        RETRYSAFE_TASK_QUEUE: TASK_QUEUE,
        BANK_URL: bankUrl,
        RESERVATIONS_URL: reservationsUrl,
        DOWNSTREAM_TIMEOUT: String(CHAOS_TIMINGS.downstreamTimeoutMs),
        WORKER_METRICS_ADDRESS: 'off',
        LOG_LEVEL: 'info',
        ...appEnv.worker,
      },
      'worker ready',
      workerTap,
    ),
  ) as [Part, Part];
  const apiPorts = [api0Port!, api1Port!] as const;
  const apis = ([0, 1] as const).map((i) =>
    part(
      `api-${i}`,
      'client/api/server.ts',
      {
        ...temporalEnv,
        API_HOST: '127.0.0.1',
        API_PORT: String(apiPorts[i]),
        RETRYSAFE_TASK_QUEUE: TASK_QUEUE,
        RETRYSAFE_STEP_DEADLINE: String(CHAOS_TIMINGS.stepDeadlineMs),
        RETRYSAFE_ATTENTION_AFTER: String(CHAOS_TIMINGS.attentionAfterMs),
        // Both instances count the tenants' rates in one file, as instances of one deployment do.
        RETRYSAFE_LIMITS_DB: join(dir, 'limits.db'),
        LOG_LEVEL: 'info',
        ...appEnv.api,
      },
      'api listening',
      () => undefined,
      // A POST waits for the outcome (Prefer: wait, at most 60 s).
      70_000,
    ),
  ) as [Part, Part];

  const closeFiles = async () => {
    await closeClusterLogs();
    await Promise.all(files.map((f) => new Promise((resolve) => f.end(resolve))));
  };
  const json = async (url: string, method: string, body?: unknown) => {
    const res = await fetch(url, {
      method,
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(10_000),
    });
    const parsed = (await res.json()) as Record<string, unknown>;
    if (res.status >= 300) throw new Error(`${method} ${url} → ${res.status} ${JSON.stringify(parsed)}`);
    return parsed;
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

  const initialBalances: Record<string, number> = {};
  for (const a of LEDGER.accounts) {
    const res = await json(`${bankUrl}/accounts`, 'POST', { id: a.id, currency: 'EUR', balance: a.balance });
    initialBalances[a.id] = Number(res.balance);
  }
  const initialStock: Record<string, number> = {};
  for (const s of LEDGER.stock) {
    const res = await json(`${reservationsUrl}/inventory/${s.sku}`, 'PUT', { available: s.available });
    initialStock[s.sku] = Number(res.available);
  }

  const sandboxUrl = (service: Service) => (service === 'bank' ? bankUrl : reservationsUrl);
  const currentFaults: Record<Service, FaultsPatch> = { bank: {}, reservations: {} };
  const setFaults = async (service: Service, faults: FaultsPatch) => {
    currentFaults[service] = { ...currentFaults[service], ...faults };
    await json(`${sandboxUrl(service)}/_faults`, 'PUT', faults);
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
