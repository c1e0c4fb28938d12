// The stack of a chaos run, all real processes on loopback run by the repository's one
// supervisor: Temporal (the embedded dev server on its own SQLite file, as `npm start` runs
// it, or the multi-process cluster on PostgreSQL, as `npm run cluster` does, on free ports and
// without the Web UI), the bank and the reservation service with SANDBOX_FAULTS=1, two workers
// on one task queue, two API instances. The run kills and restarts them on purpose; a process
// that dies on its own is restarted after a second and counted. Each process writes to a log
// file in the run's directory, and the structured fields of its lines are read as they are
// printed (log-taps.ts).
import { chmodSync, createWriteStream, mkdirSync, type WriteStream } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { TEMPORAL_CONNECTION_VARS } from '../../common/temporal.js';
import { NO_FAULTS, type FaultsPatch } from '../../downstream/shared/faults.js';
import { defineCluster } from '../cluster/cluster.js';
import { findFreeBase } from '../cluster/ports.js';
import { superviseCluster } from '../cluster/supervise.js';
import { startDevServer } from '../dev-server.js';
import { loopbackUrl, PART_ENTRY, partEnv, type StackDescription } from '../stack-env.js';
import { describeExit } from '../supervisor/child.js';
import type { Part, RestartPolicy } from '../supervisor/part.js';
import { freePort } from '../supervisor/ports.js';
import { lineProbe } from '../supervisor/ready.js';
import { Supervisor } from '../supervisor/supervisor.js';
import { ensureTemporalCli } from '../temporal-cli.js';
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
import { LEDGER, SERVICES, type Service } from './vocabulary.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const TASK_QUEUE = 'retrysafe-chaos';
const READY_TIMEOUT_MS = 180_000;
const DAY = 86_400_000;
/** A process that dies on its own comes back a second later, whatever happened before. */
const REVIVE: RestartPolicy = { maxFailedStarts: 3, initialDelayMs: 1_000, maxDelayMs: 1_000, stableAfterMs: 0 };
/** The cluster's processes are more patient: one that dies while PostgreSQL restarts cannot start until it is back. */
const REVIVE_CLUSTER: RestartPolicy = { maxFailedStarts: 10, initialDelayMs: 1_000, maxDelayMs: 5_000, stableAfterMs: 0 };

/** Runs `attempt` until it succeeds; after a failure it tries again in `pauseMs` while `keepTrying()` holds, else throws. */
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

/** What a kill found (the POSTs the process had received and not answered, as it logged them) and how long it was down. */
export interface KillResult {
  inFlight: number;
  downMs: number;
}

/** Extra variables for the workers and the APIs (the completion webhooks' settings). */
export interface ChaosAppEnv {
  worker?: Record<string, string>;
  api?: Record<string, string>;
}

/** Any answer but a 2xx is an error naming the call. */
async function sandboxJson(url: string, method: string, body?: unknown): Promise<Record<string, unknown>> {
  const res = await fetch(url, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(10_000),
  });
  const parsed = (await res.json()) as Record<string, unknown>;
  if (res.status >= 300) throw new Error(`${method} ${url} → ${res.status} ${JSON.stringify(parsed)}`);
  return parsed;
}

/** Whether a sandbox's injected faults stop its requests before they commit. */
const holdsRequests = (f: FaultsPatch) => Number(f.delayMs ?? 0) > 0 || f.down === true || Number(f.failBeforeCommit ?? 0) > 0;

export class ChaosStack {
  topology!: Topology;
  temporalAddress!: string;
  /** The cluster's PostgreSQL database for the API instances' rate windows (none on the dev server). */
  private limitsUrl: string | undefined;
  bankUrl!: string;
  reservationsUrl!: string;
  apiUrls!: [string, string];
  readonly counts: LogCounts = newLogCounts();
  /** What the run starts from, as the sandboxes said when it set them up: balances by account, stock by SKU. */
  readonly initialBalances: Record<string, number> = {};
  readonly initialStock: Record<string, number> = {};
  /** Kills by this run, per part, that the supervisor turned into restarts; parts being killed right now. */
  private readonly planned = new Map<string, number>();
  private readonly killing = new Set<string>();
  private readonly files: WriteStream[] = [];
  private readonly inFlight = new Map<string, InFlight>();
  private readonly currentFaults: Record<Service, FaultsPatch> = { bank: {}, reservations: {} };
  private closeClusterLogs = () => Promise.resolve();
  readonly supervisor: Supervisor;

  constructor(
    readonly dir: string,
    private readonly log: ChaosLog,
  ) {
    this.supervisor = new Supervisor((event) => {
      const name = event.part.name;
      if (event.type === 'crashed' && !this.killing.has(name))
        log(`${name} exited on its own (${describeExit(event.exit)}); restarting it`);
      if (event.type === 'retrying') log(`${name} did not start again: ${event.reason}; retrying`);
      if (event.type === 'gave-up') log(`${name} restart failed: ${event.error.message}`);
    });
  }

  logFile(name: string): WriteStream {
    const file = createWriteStream(join(this.dir, 'logs', `${name}.log`), { flags: 'a' });
    this.files.push(file);
    return file;
  }

  /** Starts the run's Temporal on the supervisor: the dev server, or the cluster. */
  async startTemporal(topology: Topology): Promise<void> {
    this.topology = topology;
    if (topology === 'embedded') {
      const file = this.logFile('temporal');
      const server = await startDevServer({
        ...{
          bin: ensureTemporalCli(),
          dbFile: join(this.dir, 'temporal.db'),
          port: await freePort(),
          headless: true,
          logLevel: 'error',
        },
        ...{
          retentionMs: DAY,
          onOutput: (line: string) => file.write(line + '\n'),
          readyTimeoutMs: 90_000,
          supervisor: this.supervisor,
          restart: REVIVE,
        },
      });
      this.temporalAddress = server.address;
      return;
    }
    const definition = defineCluster({
      root: ROOT,
      dataDir: join(this.dir, 'cluster'),
      basePort: await findFreeBase(),
      retentionMs: DAY,
      ui: false,
    });
    const cluster = await superviseCluster(definition, {
      ...{ supervisor: this.supervisor, restart: REVIVE_CLUSTER, readyTimeoutMs: READY_TIMEOUT_MS },
      onStep: (step, { note, ms }) => {
        if (note !== undefined) this.log(`cluster ${step.name}: ${note} (${((ms ?? 0) / 1000).toFixed(1)} s)`);
      },
    });
    this.temporalAddress = definition.frontendAddress;
    this.limitsUrl = definition.limitsUrl;
    this.closeClusterLogs = () => cluster.closeLogs();
  }

  /** A Node part whose output goes to its log file and through `tap`; `slowestRequestMs` bounds a request's time in flight. */
  addPart(
    name: string,
    entry: string,
    env: Record<string, string>,
    readyText: string,
    tap: (entry: LogEntry) => void,
    slowestRequestMs = 10_000,
  ): Part {
    const file = this.logFile(name);
    const requests = new InFlight(slowestRequestMs);
    this.inFlight.set(name, requests);
    return this.supervisor.add({
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
        const parsed = logEntryOf(line);
        if (!parsed) return;
        requests.feed(parsed);
        tap(parsed);
      },
    });
  }

  /** The sandboxes, two workers and two APIs on this Temporal; then the ledger the run starts from. */
  async startApps(appEnv: ChaosAppEnv): Promise<void> {
    const [bank, reservations, api0, api1] = await Promise.all(Array.from({ length: 4 }, () => freePort()));
    const stack: StackDescription = {
      temporal: { address: this.temporalAddress, namespace: 'default' },
      taskQueue: TASK_QUEUE,
      bank: { host: '127.0.0.1', port: bank, db: join(this.dir, 'bank.db') },
      reservations: { host: '127.0.0.1', port: reservations, db: join(this.dir, 'reservations.db') },
      faults: true,
      worker: { downstreamTimeout: String(CHAOS_TIMINGS.downstreamTimeoutMs), metricsAddress: 'off' },
      // Both instances count the tenants' rates in one store, as instances of one deployment do:
      // the cluster's PostgreSQL, or one file beside the dev server.
      api: {
        host: '127.0.0.1',
        ...(this.limitsUrl ? { limitsUrl: this.limitsUrl } : { limitsDb: join(this.dir, 'limits.db') }),
      },
    };
    [this.bankUrl, this.reservationsUrl] = [loopbackUrl(bank!), loopbackUrl(reservations!)];
    this.apiUrls = [loopbackUrl(api0!), loopbackUrl(api1!)];
    // A sandbox's own crash is planned: the supervisor's restart of it is no news.
    const sandboxTap = (service: Service) => (entry: LogEntry) => {
      if (countFault(this.counts, service, entry) === 'crashAfterCommit')
        this.planned.set(service, (this.planned.get(service) ?? 0) + 1);
    };
    const sandboxes = SERVICES.map((s) => this.addPart(s, PART_ENTRY[s], partEnv(stack, s), `${s} listening at`, sandboxTap(s)));
    const workers = [0, 1].map((i) =>
      this.addPart(`worker-${i}`, PART_ENTRY.worker, partEnv(stack, 'worker', appEnv.worker), 'worker ready', (e) =>
        countDownstreamFailure(this.counts, e),
      ),
    );
    const apiEnv = {
      RETRYSAFE_STEP_DEADLINE: String(CHAOS_TIMINGS.stepDeadlineMs),
      RETRYSAFE_ATTENTION_AFTER: String(CHAOS_TIMINGS.attentionAfterMs),
      ...appEnv.api,
    };
    // A POST waits for the outcome (Prefer: wait, at most 60 s).
    const apis = [api0!, api1!].map((port, i) =>
      this.addPart(
        `api-${i}`,
        PART_ENTRY.api,
        partEnv({ ...stack, api: { ...stack.api, port } }, 'api', apiEnv),
        'api listening',
        () => undefined,
        70_000,
      ),
    );
    await Promise.all(sandboxes.map((p) => p.start()));
    // Workers bundle the workflows with webpack at start: one after the other on 2 cores.
    await Promise.all([workers[0]!.start(), ...apis.map((p) => p.start())]);
    await workers[1]!.start();
    for (const a of LEDGER.accounts)
      this.initialBalances[a.id] = Number(
        (await sandboxJson(`${this.bankUrl}/accounts`, 'POST', { id: a.id, currency: LEDGER.currency, balance: a.balance }))
          .balance,
      );
    for (const s of LEDGER.stock)
      this.initialStock[s.sku] = Number(
        (await sandboxJson(`${this.reservationsUrl}/inventory/${s.sku}`, 'PUT', { available: s.available })).available,
      );
  }

  /** Exits nobody planned: a process that died on its own (the run's own kills are not counted). */
  unexpectedExits(): Record<string, number> {
    const exits = this.supervisor.parts.map((p) => [p.name, p.unexpectedExits - (this.planned.get(p.name) ?? 0)] as const);
    return Object.fromEntries(exits.filter(([, n]) => n > 0));
  }

  /** Records `faults` as in force on `service` (a restarted process gets them again), then sets them. */
  async setFaults(service: Service, faults: FaultsPatch): Promise<void> {
    this.currentFaults[service] = { ...this.currentFaults[service], ...faults };
    await sandboxJson(`${service === 'bank' ? this.bankUrl : this.reservationsUrl}/_faults`, 'PUT', faults);
  }

  /** Every fault off. A sandbox may crash on its own until this lands: while it comes back, the PUT is tried again. */
  async clearFaults(): Promise<void> {
    const until = Date.now() + READY_TIMEOUT_MS;
    await Promise.all(
      SERVICES.map((s) =>
        retryWhile(
          () => this.setFaults(s, NO_FAULTS),
          () => Date.now() < until,
          250,
        ),
      ),
    );
  }

  private byName(name: string): Part {
    const found = this.supervisor.parts.find((p) => p.name === name);
    if (!found) throw new Error(`no part named ${name}`);
    return found;
  }

  /** Until a POST is in flight at `name` plus `afterMs` (bounded: a part nobody calls is killed anyway). */
  private async untilRequest(name: string, afterMs: number): Promise<void> {
    const requests = this.inFlight.get(name)!;
    const service = SERVICES.find((s) => s === name);
    const until = Date.now() + 30_000;
    // A sandbox holding its requests before the commit would only ever be cut there: wait for the window to end.
    while (service && holdsRequests(this.currentFaults[service]) && Date.now() < until) await sleep(100);
    do {
      await requests.busy(until - Date.now());
      await sleep(afterMs);
    } while (requests.count() === 0 && Date.now() < until);
  }

  /**
   * SIGKILL now, or (`afterRequestMs`) once the part has received its next request plus that
   * pause, so that the kill cuts a request in flight; then waits until the supervisor has it up again.
   */
  async kill(name: string, opts: { afterRequestMs?: number } = {}): Promise<KillResult> {
    const target = this.byName(name);
    if (opts.afterRequestMs !== undefined && this.inFlight.has(name)) await this.untilRequest(name, opts.afterRequestMs);
    // A sandbox that crashed on its own (crashAfterCommit) is killed once it is back.
    const backBy = Date.now() + READY_TIMEOUT_MS;
    while (!target.running && Date.now() < backBy) await sleep(100);
    const [pid, spawns] = [target.pid, target.spawns];
    if (pid === undefined || !target.running) throw new Error(`${name} is not running`);
    const cut = this.inFlight.get(name)?.count() ?? 0;
    this.planned.set(name, (this.planned.get(name) ?? 0) + 1);
    this.killing.add(name);
    const killedAt = Date.now();
    try {
      process.kill(pid, 'SIGKILL');
      // The supervisor sees the exit as a crash and starts a new process after its back-off.
      while (!(target.running && target.spawns > spawns)) {
        if (Date.now() > killedAt + READY_TIMEOUT_MS)
          throw new Error(`${name} did not come back within ${READY_TIMEOUT_MS / 1000} s`);
        await sleep(100);
      }
    } finally {
      this.killing.delete(name);
    }
    const downMs = Date.now() - killedAt;
    // A sandbox keeps its faults in memory: the new process gets the current ones. Best effort:
    // with a crash armed, a commit racing this PUT can kill it before it answers.
    const service = SERVICES.find((s) => s === name);
    if (service)
      await this.setFaults(service, this.currentFaults[service]).catch((err: unknown) =>
        this.log(`${name} is back, but did not take its faults again: ${String(err)}`),
      );
    return { inFlight: cut, downMs };
  }

  /** Stops a part (its stop signal, or `signal`); it stays down until startPart(). */
  async stopPart(name: string, signal?: NodeJS.Signals): Promise<void> {
    await this.byName(name).stop(signal ? { signal } : {});
  }

  startPart = (name: string) => this.byName(name).start();
  /** Parts by name: bank, reservations, worker-0/1, api-0/1, and temporal or the cluster's processes. */
  running = (name: string) => this.byName(name).running;

  /** Every part running (after the fault phase): restarts what is down, in start order. */
  async ensureAllUp(): Promise<void> {
    for (const p of this.supervisor.parts) if (!p.running) await p.start();
  }

  /** Reverse order: APIs and workers first, then the sandboxes, Temporal last. */
  async stop(): Promise<void> {
    await this.supervisor.stopAll();
    await this.closeClusterLogs();
    await Promise.all(this.files.map((f) => new Promise((resolve) => f.end(resolve))));
  }
}

export async function startChaosStack(
  dir: string,
  log: ChaosLog,
  topology: Topology,
  appEnv: ChaosAppEnv = {},
): Promise<ChaosStack> {
  mkdirSync(join(dir, 'logs'), { recursive: true });
  // PostgreSQL runs as its own user when we are root: it must be able to reach its folder.
  chmodSync(dir, 0o755);
  const stack = new ChaosStack(dir, log);
  try {
    await stack.startTemporal(topology);
    await stack.startApps(appEnv);
    return stack;
  } catch (err) {
    await stack.stop();
    throw err;
  }
}
