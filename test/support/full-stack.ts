// The one full-stack fixture of the suites that test the system end to end (e2e, CLI,
// browser, observability, client, hostile input, security, the history recorder): the
// shared Temporal dev server of the global setup, the two sandboxes, a worker and the API.
// Each part runs in this process or as a real process, as a suite needs: its logs, its
// metrics endpoint or a kill need a process; in-process parts start faster. A suite that
// builds its own API (raw sockets, HTTP limits) takes the rest without one. Every suite
// gets its own task queue, so suites never share a worker.
import type { Client } from '@temporalio/client';
import { inject } from 'vitest';
import {
  compiledEntry,
  loopbackUrl,
  PART_ENTRY,
  partEnv,
  type StackDescription,
  type StackPartName,
} from '../../tools/stack-env.js';
import { freePort } from '../../tools/supervisor/ports.js';
import { apiClient, FIXED_IN_FLIGHT, startApi, type ApiClient } from './api.js';
import { spawnEntry, type ChildHandle } from './processes.js';
import { useForFile } from './use-for-file.js';
import {
  bankHandle,
  reservationsHandle,
  startBank,
  startReservations,
  startWorker,
  temporalClient,
  uniqueId,
  type BankHandle,
  type ReservationsHandle,
} from './stack.js';

export type Where = 'in-process' | 'process';

export interface FullStackOptions {
  /** Prefix of the task queue: names the suite in Temporal. */
  name: string;
  /** Where the sandboxes run (default in-process). */
  sandboxes?: Where;
  /** Fault injection on the sandboxes (`PUT /_faults`); on by default. */
  faults?: boolean;
  /** The reservation service; without it the worker's reservation calls go nowhere. */
  reservations?: boolean;
  /** Where the worker runs (default in-process), or no worker at all. */
  worker?: Where | 'none';
  /** A worker process exposes its runtime metrics on a free port (`workerMetricsUrl`). */
  workerMetrics?: boolean;
  /** Where the API runs (default in-process), or no API: a suite that builds its own on the stack's task queue. */
  api?: Where | 'none';
  /** The parts run as processes run the compiled JavaScript under dist/ (`npm run build`), not the TypeScript. */
  compiled?: boolean;
  /** RETRYSAFE_API_KEYS of the API (default: dev mode). */
  apiKeys?: string;
  stepDeadlineMs?: number;
  attentionAfterMs?: number;
  /** Variables for every part run as a process, and for the API in this process too. */
  env?: Record<string, string>;
  /** Variables for the worker process on top of those. */
  workerEnv?: Record<string, string>;
  /** Services besides the sandboxes, as RETRYSAFE_SERVICES names them (`shipping=http://...`). */
  services?: string;
}

export interface FullStack {
  taskQueue: string;
  bank: BankHandle;
  reservations: ReservationsHandle;
  api: ApiClient;
  /** A Temporal client on the shared dev server. */
  temporal: Client;
  /** The worker process's metrics endpoint, with `workerMetrics`. */
  workerMetricsUrl: string | undefined;
  /** Every line a part run as a process printed. */
  output(part: StackPartName): string[];
  /** The process id of a part run as a process, while it runs. */
  pid(part: StackPartName): number | undefined;
  /** A worker process on this stack's task queue and sandboxes; the caller waits for it and stops it. */
  spawnWorker(env?: Record<string, string>): ChildHandle;
  close(): Promise<void>;
}

export async function startFullStack(opts: FullStackOptions): Promise<FullStack> {
  const taskQueue = uniqueId(opts.name);
  const temporalAddress = inject('temporalAddress');
  const processes = new Map<StackPartName, ChildHandle>();
  const closers: Array<() => Promise<void>> = [];
  const processEnv = (own: Record<string, string>) => ({ ...opts.env, ...own });
  /** An entry point, named as in the source, in the layout the stack runs. */
  const entryOf = (source: string) => (opts.compiled ? compiledEntry(source) : source);
  const startProcess = async (name: StackPartName, env: Record<string, string>, readyLine: string, timeoutMs = 60_000) => {
    const child = spawnEntry(entryOf(PART_ENTRY[name]), processEnv(env));
    processes.set(name, child);
    closers.push(() => child.kill('SIGTERM'));
    await child.waitFor(readyLine, timeoutMs);
    return child;
  };

  const startSandboxes = async (): Promise<[BankHandle, ReservationsHandle | undefined]> => {
    const withReservations = opts.reservations ?? true;
    const faults = opts.faults ?? true;
    if ((opts.sandboxes ?? 'in-process') === 'in-process') {
      const started = await Promise.all([startBank({ faults }), withReservations ? startReservations({ faults }) : undefined]);
      for (const sandbox of started) if (sandbox) closers.push(() => sandbox.close());
      return started;
    }
    const dir = `${inject('tmpRoot')}/${taskQueue}`;
    const bankPlace = { port: await freePort(), db: `${dir}/bank.db` };
    const reservationsPlace = { port: await freePort(), db: `${dir}/reservations.db` };
    const places: StackDescription = { bank: bankPlace, reservations: reservationsPlace, faults };
    const [bank, reservations] = await Promise.all([
      startProcess('bank', partEnv(places, 'bank'), 'bank listening'),
      withReservations ? startProcess('reservations', partEnv(places, 'reservations'), 'reservations listening') : undefined,
    ]);
    return [
      bankHandle({ url: loopbackUrl(bankPlace.port), dbFile: bankPlace.db, close: () => bank.kill() }),
      reservations
        ? reservationsHandle({
            url: loopbackUrl(reservationsPlace.port),
            dbFile: reservationsPlace.db,
            close: () => reservations.kill(),
          })
        : undefined,
    ];
  };

  try {
    const [bank, reservations] = await startSandboxes();
    const reservationsUrl = reservations?.url ?? 'http://127.0.0.1:9';
    const stack: StackDescription = {
      temporal: { address: temporalAddress, namespace: 'default' },
      taskQueue,
      bank: { url: bank.url },
      reservations: { url: reservationsUrl },
      worker: { metricsAddress: 'off', downstreamTimeout: '2s' },
      ...(opts.services ? { services: opts.services } : {}),
    };
    const workerEnv = (extra: Record<string, string> = {}) => partEnv(stack, 'worker', { ...opts.workerEnv, ...extra });

    let workerMetricsUrl: string | undefined;
    if (opts.worker === 'process') {
      const metrics = opts.workerMetrics ? `127.0.0.1:${await freePort()}` : undefined;
      workerMetricsUrl = metrics && `http://${metrics}/metrics`;
      // The worker bundles the workflows at start: slow on a busy machine.
      await startProcess('worker', workerEnv(metrics ? { WORKER_METRICS_ADDRESS: metrics } : {}), 'worker ready', 120_000);
    } else if ((opts.worker ?? 'in-process') === 'in-process') {
      const worker = await startWorker({ taskQueue, bankUrl: bank.url, reservationsUrl });
      closers.push(() => worker.stop());
    }

    let api: ApiClient | undefined;
    if (opts.api === 'process') {
      const port = await freePort();
      const child = await startProcess(
        'api',
        partEnv({ temporal: { address: temporalAddress }, taskQueue, api: { port } }, 'api', {
          ...FIXED_IN_FLIGHT,
          ...(opts.apiKeys ? { RETRYSAFE_API_KEYS: opts.apiKeys } : {}),
          ...(opts.stepDeadlineMs ? { RETRYSAFE_STEP_DEADLINE: String(opts.stepDeadlineMs) } : {}),
          ...(opts.attentionAfterMs ? { RETRYSAFE_ATTENTION_AFTER: String(opts.attentionAfterMs) } : {}),
        }),
        'api listening',
      );
      api = apiClient(`http://127.0.0.1:${port}`, () => child.kill());
    } else if ((opts.api ?? 'in-process') === 'in-process') {
      const inProcess = await startApi({
        taskQueue,
        ...(opts.apiKeys ? { apiKeys: opts.apiKeys } : {}),
        ...(opts.stepDeadlineMs ? { stepDeadlineMs: opts.stepDeadlineMs } : {}),
        ...(opts.attentionAfterMs ? { attentionAfterMs: opts.attentionAfterMs } : {}),
        // As a process would get them.
        ...(opts.env ? { env: opts.env } : {}),
      });
      closers.push(() => inProcess.close());
      api = inProcess;
    }
    const temporal = await temporalClient();
    closers.push(() => temporal.close());

    return {
      taskQueue,
      bank,
      get reservations(): ReservationsHandle {
        if (!reservations) throw new Error(`the ${opts.name} stack runs without the reservation service`);
        return reservations;
      },
      get api(): ApiClient {
        if (!api) throw new Error(`the ${opts.name} stack runs without the API`);
        return api;
      },
      temporal: temporal.client,
      workerMetricsUrl,
      output(part) {
        const child = processes.get(part);
        if (!child) throw new Error(`${part} does not run as a process in the ${opts.name} stack`);
        return child.output;
      },
      pid: (part) => processes.get(part)?.pid,
      spawnWorker: (env) => spawnEntry(entryOf(PART_ENTRY.worker), processEnv(workerEnv(env))),
      close: () => closeAll(closers),
    };
  } catch (err) {
    await closeAll(closers);
    throw err;
  }
}

/** Stops what was started, the API first (the reverse of the start order). */
async function closeAll(closers: Array<() => Promise<void>>): Promise<void> {
  for (const close of closers.splice(0).reverse()) await close().catch(() => undefined);
}

/**
 * The full stack for the file that calls this: started in its beforeAll, stopped in its
 * afterAll. Its fields are usable from the first test on.
 */
export function useFullStack(opts: FullStackOptions): FullStack {
  return useForFile(
    `the ${opts.name} stack`,
    () => startFullStack(opts),
    (stack) => stack.close(),
  );
}
