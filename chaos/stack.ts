// The stack of a chaos run, all real processes on loopback run by the repository's one
// supervisor: a Temporal dev server on its own SQLite file, the bank and the reservation
// service with SANDBOX_FAULTS=1, two workers on one task queue, two API instances. The run
// kills and restarts them on purpose; a process that dies on its own is restarted after a
// second and counted. Each process writes to a log file in the run's directory, and the
// sandboxes' fault lines are counted as they are printed (they are the ground truth of what
// fired).
import { createWriteStream, mkdirSync, type WriteStream } from 'node:fs';
import { join } from 'node:path';
import { startDevServer } from '../common/dev-server.js';
import { describeExit } from '../common/supervisor/child.js';
import type { Part, PartSpec, RestartPolicy } from '../common/supervisor/part.js';
import { freePort } from '../common/supervisor/ports.js';
import { lineProbe } from '../common/supervisor/ready.js';
import { Supervisor } from '../common/supervisor/supervisor.js';
import { TEMPORAL_CONNECTION_VARS } from '../common/temporal.js';
import { ensureTemporalCli } from '../scripts/temporal-cli.js';
import { CHAOS_TIMINGS, LEDGER, type Service } from './plan.js';

export const TASK_QUEUE = 'retrysafe-chaos';
const READY_TIMEOUT_MS = 180_000;

/** A process that dies on its own comes back a second later, whatever happened before. */
const REVIVE: RestartPolicy = { maxFailedStarts: 3, initialDelayMs: 1_000, maxDelayMs: 1_000, stableAfterMs: 0 };

/** What the children printed that the report counts. */
export interface LogCounts {
  /** Effects committed whose answer the sandbox then destroyed (dropResponseAfterCommit). */
  droppedResponses: Record<Service, number>;
  /** 503 injected_failure before anything was done (failBeforeCommit). */
  failedBeforeCommit: Record<Service, number>;
  /** Connections reset while the service was `down`. */
  refusedWhileDown: Record<Service, number>;
  /** Activity attempts that failed (timeouts, resets, 5xx) as the workers logged them. */
  activityAttemptFailures: number;
}

export type ChaosLog = (line: string) => void;

export interface ChaosStack {
  dir: string;
  temporalAddress: string;
  bankUrl: string;
  reservationsUrl: string;
  apiUrls: [string, string];
  counts: LogCounts;
  /** Restarts seen that nobody asked for (a process that died on its own). */
  unexpectedExits(): Record<string, number>;
  setFaults(service: Service, faults: Record<string, unknown>): Promise<void>;
  clearFaults(): Promise<void>;
  killWorker(i: 0 | 1): Promise<void>;
  startWorker(i: 0 | 1): Promise<void>;
  restartApi(i: 0 | 1): Promise<void>;
  stopTemporal(): Promise<void>;
  startTemporal(): Promise<void>;
  temporalUp(): boolean;
  /** Every part running (after the fault phase): restarts what is down. */
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

export async function startChaosStack(dir: string, log: ChaosLog, appEnv: ChaosAppEnv = {}): Promise<ChaosStack> {
  mkdirSync(dir, { recursive: true });
  const logDir = join(dir, 'logs');
  mkdirSync(logDir, { recursive: true });
  const files: WriteStream[] = [];
  const logFile = (name: string) => {
    const file = createWriteStream(join(logDir, `${name}.log`), { flags: 'a' });
    files.push(file);
    return file;
  };

  const supervisor = new Supervisor((event) => {
    if (event.type === 'crashed') log(`${event.part.name} exited on its own (${describeExit(event.exit)}); restarting it`);
    if (event.type === 'gave-up') log(`${event.part.name} restart failed: ${event.error.message}`);
  });
  const bin = ensureTemporalCli();
  const [temporalPort, bankPort, reservationsPort, api0Port, api1Port] = await Promise.all(
    Array.from({ length: 5 }, () => freePort()),
  );
  const temporalLog = logFile('temporal');
  const temporal = await startDevServer({
    bin,
    dbFile: join(dir, 'temporal.db'),
    port: temporalPort!,
    headless: true,
    logLevel: 'error',
    retentionMs: 24 * 3_600_000,
    onOutput: (line) => temporalLog.write(line + '\n'),
    readyTimeoutMs: 90_000,
    supervisor,
    restart: REVIVE,
  });
  const temporalAddress = temporal.address;

  const counts: LogCounts = {
    droppedResponses: { bank: 0, reservations: 0 },
    failedBeforeCommit: { bank: 0, reservations: 0 },
    refusedWhileDown: { bank: 0, reservations: 0 },
    activityAttemptFailures: 0,
  };
  const sandboxTap = (service: Service) => (line: string) => {
    if (!line.includes('fault') && !line.includes('injected_failure')) return;
    if (line.includes('dropping the response')) counts.droppedResponses[service]++;
    else if (line.includes('"code":"injected_failure"')) counts.failedBeforeCommit[service]++;
    else if (line.includes('fault: down')) counts.refusedWhileDown[service]++;
  };
  const workerTap = (line: string) => {
    if (line.includes('Activity failed') || line.includes('activity failed')) counts.activityAttemptFailures++;
  };

  /** A Node part whose output goes to its log file and through `tap`. */
  const part = (
    name: string,
    entry: string,
    env: Record<string, string>,
    readyText: string,
    tap: (line: string) => void,
  ): Part => {
    const file = logFile(name);
    const spec: PartSpec = {
      name,
      command: { entry },
      env: { LOG_PRETTY: '0', ...env },
      // The children talk to this run's dev server only: no cluster credentials leak in.
      unsetEnv: TEMPORAL_CONNECTION_VARS,
      ready: lineProbe(readyText),
      readyTimeoutMs: READY_TIMEOUT_MS,
      // A graceful stop that hangs (a worker draining a stuck activity) is cut short.
      stopGraceMs: 15_000,
      restart: REVIVE,
      onSpawn: () => file.write(`--- started at ${new Date().toISOString()}\n`),
      onLine: (line) => {
        file.write(line + '\n');
        tap(line);
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
        LOG_LEVEL: 'info',
        ...appEnv.api,
      },
      'api listening',
      () => undefined,
    ),
  ) as [Part, Part];
  const nodeParts = [bank, reservations, ...workers, ...apis];

  const closeFiles = () => Promise.all(files.map((f) => new Promise((resolve) => f.end(resolve))));
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

  return {
    dir,
    temporalAddress,
    bankUrl,
    reservationsUrl,
    apiUrls: [`http://127.0.0.1:${apiPorts[0]}`, `http://127.0.0.1:${apiPorts[1]}`],
    counts,
    initialBalances,
    initialStock,
    unexpectedExits: () =>
      Object.fromEntries(supervisor.parts.filter((p) => p.unexpectedExits > 0).map((p) => [p.name, p.unexpectedExits])),
    async setFaults(service, faults) {
      await json(`${sandboxUrl(service)}/_faults`, 'PUT', faults);
    },
    async clearFaults() {
      const none = { dropResponseAfterCommit: 0, failBeforeCommit: 0, delayMs: 0, down: false };
      await Promise.all([json(`${bankUrl}/_faults`, 'PUT', none), json(`${reservationsUrl}/_faults`, 'PUT', none)]);
    },
    killWorker: async (i) => void (await workers[i].stop({ signal: 'SIGKILL' })),
    startWorker: (i) => workers[i].start(),
    async restartApi(i) {
      await apis[i].stop();
      await apis[i].start();
    },
    stopTemporal: async () => void (await temporal.part.stop()),
    startTemporal: () => temporal.part.start(),
    temporalUp: () => temporal.part.running,
    async ensureAllUp() {
      for (const p of [temporal.part, ...nodeParts]) if (!p.running) await p.start();
    },
    async stop() {
      // Reverse order: APIs and workers first, then the sandboxes, Temporal last.
      await supervisor.stopAll();
      await closeFiles();
    },
  };
}
