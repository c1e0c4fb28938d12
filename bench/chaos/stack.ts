// The chaos run's own stack, all real processes on loopback: one Temporal dev server on a
// SQLite file, the two sandboxes with SANDBOX_FAULTS=1, two workers on one task queue and
// two API instances. It can SIGKILL and restart a worker, restart an API instance
// (SIGTERM, then start on the same port) and stop/start Temporal on the same database.
// Every child's output goes to a log file in the run's directory, and the sandboxes'
// fault lines are counted as they are printed (they are the ground truth of what fired).
import { createWriteStream, mkdirSync, type WriteStream } from 'node:fs';
import { join } from 'node:path';
import { Connection } from '@temporalio/client';
import { startDevServer, type DevServer, type DevServerOptions } from '../../common/dev-server.js';
import { setupNamespace, waitForSearchAttributes } from '../../common/namespace-setup.js';
import { TEMPORAL_CONNECTION_VARS } from '../../scripts/launcher/temporal.js';
import { ensureTemporalCli } from '../../scripts/temporal-cli.js';
import { spawnEntry, type ChildHandle } from '../../test/support/processes.js';
import { freePort } from '../../test/support/ports.js';
import { CHAOS_TIMINGS, LEDGER, type Service } from './plan.js';

export const TASK_QUEUE = 'retrysafe-chaos';
const READY_TIMEOUT_MS = 180_000;

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

function splitLines(onLine: (line: string) => void): (chunk: Buffer) => void {
  let rest = '';
  return (chunk) => {
    const lines = (rest + chunk.toString('utf8')).split('\n');
    rest = lines.pop() ?? '';
    for (const line of lines) if (line) onLine(line);
  };
}

/** One supervised child: started by `start()`, restarted if it dies without being asked to. */
class ManagedProcess {
  private handle: ChildHandle | undefined;
  private expectedExit = false;
  private readonly file: WriteStream;
  unexpectedExits = 0;
  starts = 0;

  constructor(
    readonly name: string,
    private readonly entry: string,
    private readonly env: Record<string, string>,
    private readonly readyText: string,
    logDir: string,
    private readonly onLine: (line: string) => void,
    private readonly log: ChaosLog,
    private readonly shouldRevive: () => boolean,
  ) {
    this.file = createWriteStream(join(logDir, `${name}.log`), { flags: 'a' });
  }

  get running(): boolean {
    return this.handle !== undefined;
  }

  async start(): Promise<void> {
    this.expectedExit = false;
    this.starts++;
    this.file.write(`--- start #${this.starts} at ${new Date().toISOString()}\n`);
    const handle = spawnEntry(this.entry, this.env);
    this.handle = handle;
    const tap = splitLines((line) => {
      this.file.write(line + '\n');
      this.onLine(line);
    });
    handle.process.stdout?.on('data', tap);
    handle.process.stderr?.on('data', tap);
    void handle.process.then((result) => {
      if (this.handle !== handle) return;
      this.handle = undefined;
      if (this.expectedExit) return;
      this.unexpectedExits++;
      this.log(`${this.name} exited on its own (${result.signal ?? `code ${String(result.exitCode)}`}); restarting it`);
      if (this.shouldRevive()) setTimeout(() => void this.start().catch((err) => this.log(`${this.name} restart failed: ${String(err)}`)), 1_000);
    });
    await handle.waitFor(this.readyText, READY_TIMEOUT_MS);
  }

  async stop(signal: NodeJS.Signals): Promise<void> {
    const handle = this.handle;
    if (!handle) return;
    this.expectedExit = true;
    // A graceful stop that hangs (a worker draining a stuck activity) is cut short.
    const timer = setTimeout(() => handle.process.kill('SIGKILL'), 15_000);
    try {
      await handle.kill(signal);
    } finally {
      clearTimeout(timer);
    }
    if (this.handle === handle) this.handle = undefined;
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.file.end(resolve));
  }
}

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

export async function startChaosStack(dir: string, log: ChaosLog): Promise<ChaosStack> {
  mkdirSync(dir, { recursive: true });
  const logDir = join(dir, 'logs');
  mkdirSync(logDir, { recursive: true });
  // The children talk to this run's dev server only: no cluster credentials leak in.
  for (const name of TEMPORAL_CONNECTION_VARS) delete process.env[name];

  const bin = ensureTemporalCli();
  const [temporalPort, bankPort, reservationsPort, api0Port, api1Port] = await Promise.all(
    Array.from({ length: 5 }, () => freePort()),
  );
  const temporalLog = createWriteStream(join(logDir, 'temporal.log'), { flags: 'a' });
  const devServerOptions: DevServerOptions = {
    bin,
    dbFile: join(dir, 'temporal.db'),
    port: temporalPort!,
    headless: true,
    logLevel: 'error',
    onOutput: (line) => temporalLog.write(line + '\n'),
    readyTimeoutMs: 90_000,
  };
  let temporal: DevServer | undefined = await startDevServer(devServerOptions);
  const temporalAddress = temporal.address;
  const connection = await Connection.connect({ address: temporalAddress });
  try {
    await setupNamespace(connection, 'default', { retentionMs: 24 * 3_600_000 });
    await waitForSearchAttributes(connection, 'default');
  } finally {
    await connection.close();
  }

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

  let stopping = false;
  const revive = () => !stopping;
  const temporalEnv = { TEMPORAL_ADDRESS: temporalAddress, TEMPORAL_NAMESPACE: 'default', LOG_PRETTY: '0' };
  const bankUrl = `http://127.0.0.1:${bankPort}`;
  const reservationsUrl = `http://127.0.0.1:${reservationsPort}`;
  const bank = new ManagedProcess(
    'bank',
    'downstream/bank/server.ts',
    { BANK_HOST: '127.0.0.1', BANK_PORT: String(bankPort), BANK_DB: join(dir, 'bank.db'), SANDBOX_FAULTS: '1', LOG_LEVEL: 'info', LOG_PRETTY: '0' },
    'bank listening at',
    logDir,
    sandboxTap('bank'),
    log,
    revive,
  );
  const reservations = new ManagedProcess(
    'reservations',
    'downstream/reservations/server.ts',
    {
      RESERVATIONS_HOST: '127.0.0.1',
      RESERVATIONS_PORT: String(reservationsPort),
      RESERVATIONS_DB: join(dir, 'reservations.db'),
      SANDBOX_FAULTS: '1',
      LOG_LEVEL: 'info',
      LOG_PRETTY: '0',
    },
    'reservations listening at',
    logDir,
    sandboxTap('reservations'),
    log,
    revive,
  );
  const workers = ([0, 1] as const).map(
    (i) =>
      new ManagedProcess(
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
        },
        'worker ready',
        logDir,
        workerTap,
        log,
        revive,
      ),
  ) as [ManagedProcess, ManagedProcess];
  const apiPorts = [api0Port!, api1Port!] as const;
  const apis = ([0, 1] as const).map(
    (i) =>
      new ManagedProcess(
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
        },
        'api listening',
        logDir,
        () => undefined,
        log,
        revive,
      ),
  ) as [ManagedProcess, ManagedProcess];
  const all = [bank, reservations, ...workers, ...apis];

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
    stopping = true;
    await Promise.all(all.map((p) => p.stop('SIGKILL')));
    await temporal.stop();
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
    unexpectedExits: () => Object.fromEntries(all.filter((p) => p.unexpectedExits > 0).map((p) => [p.name, p.unexpectedExits])),
    async setFaults(service, faults) {
      await json(`${sandboxUrl(service)}/_faults`, 'PUT', faults);
    },
    async clearFaults() {
      const none = { dropResponseAfterCommit: 0, failBeforeCommit: 0, delayMs: 0, down: false };
      await Promise.all([json(`${bankUrl}/_faults`, 'PUT', none), json(`${reservationsUrl}/_faults`, 'PUT', none)]);
    },
    killWorker: (i) => workers[i].stop('SIGKILL'),
    startWorker: (i) => workers[i].start(),
    async restartApi(i) {
      await apis[i].stop('SIGTERM');
      await apis[i].start();
    },
    async stopTemporal() {
      const server = temporal;
      temporal = undefined;
      await server?.stop();
    },
    async startTemporal() {
      if (!temporal) temporal = await startDevServer(devServerOptions);
    },
    temporalUp: () => temporal !== undefined,
    async ensureAllUp() {
      if (!temporal) temporal = await startDevServer(devServerOptions);
      for (const p of all) if (!p.running) await p.start();
    },
    async stop() {
      stopping = true;
      // Reverse order: APIs and workers first, then the sandboxes, Temporal last.
      await Promise.all([...apis, ...workers].map((p) => p.stop('SIGTERM')));
      await Promise.all([bank.stop('SIGTERM'), reservations.stop('SIGTERM')]);
      await temporal?.stop();
      await Promise.all(all.map((p) => p.close()));
      await new Promise((resolve) => temporalLog.end(resolve));
    },
  };
}
