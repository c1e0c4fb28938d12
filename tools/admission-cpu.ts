// The API's CPU per request that admission refuses and per new operation it accepts, through
// the real app on a real port: a dev server, the sandbox bank and a worker run as processes
// of their own, the API runs here, and the requests come from a child process, so
// process.cpuUsage() around a batch counts the API's work alone (its HTTP parsing, hooks,
// answers, the engine calls of an accepted operation and the wait for its outcome).
//
//   npx tsx tools/admission-cpu.ts [--refusals 3000] [--accepted 200]
//
// Refusals: tenant "flood" over its rate (429 rate_limited), and over its share of an
// in-flight limit of one held by an operation that cannot progress (503 engine_busy); beside
// them, the floor every request pays (auth, logging, a problem answer): a malformed key,
// refused by the route's own header check just before admission.
// Accepted: tenant "steady" paying one at a time (c=1) and eight at a time (c=8), each POST
// waiting for the outcome as a client does by default. Load on the machine inflates CPU
// time too (shared caches and cores): say the load average beside the figures.
import { fork } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Client, Connection } from '@temporalio/client';
import { buildApp } from '../client/api/app.js';
import { loadApiConfig } from '../client/api/config.js';
import pino from 'pino';
import { createLogger } from '../common/logger.js';
import { startDevServer } from './dev-server.js';
import { PART_ENTRY, partEnv } from './stack-env.js';
import { lineProbe } from './supervisor/ready.js';
import { freePort } from './supervisor/ports.js';
import { Supervisor } from './supervisor/supervisor.js';
import { ensureTemporalCli } from './temporal-cli.js';

const SECRETS = { flood: 'sk_flood_0123456789abcdef', steady: 'sk_steady_0123456789abcd' };
const API_KEYS = `${SECRETS.flood}=flood,${SECRETS.steady}=steady`;
const ACCOUNT = 'acc_cpu';

interface Batch {
  url: string;
  tenant: keyof typeof SECRETS;
  count: number;
  concurrency: number;
  prefer: string;
  /** The keys' prefix: each request's key is `<tag>-<n>`. */
  tag: string;
}

/** The child: sends one batch and reports the answers' statuses. */
async function drive(batch: Batch): Promise<Record<string, number>> {
  const statuses: Record<string, number> = {};
  let sent = 0;
  const body = JSON.stringify({ account: ACCOUNT, amount: 1, currency: 'EUR' });
  const one = async () => {
    while (sent < batch.count) {
      const n = sent++;
      const res = await fetch(`${batch.url}/v1/payments`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${SECRETS[batch.tenant]}`,
          'idempotency-key': `${batch.tag}-${n}`,
          'content-type': 'application/json',
          prefer: batch.prefer,
        },
        body,
      });
      await res.arrayBuffer();
      statuses[res.status] = (statuses[res.status] ?? 0) + 1;
    }
  };
  await Promise.all(Array.from({ length: batch.concurrency }, one));
  return statuses;
}

/** Runs `batch` from a child process; the API's CPU (user + system) per request, in ms. */
async function measure(batch: Batch): Promise<{ msPerRequest: number; statuses: Record<string, number> }> {
  const child = fork(new URL(import.meta.url).pathname, ['--drive', JSON.stringify(batch)], {
    execArgv: process.execArgv,
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const ready = new Promise<void>((resolve) => child.once('message', () => resolve()));
  await ready;
  const before = process.cpuUsage();
  child.send('go');
  const statuses = await new Promise<Record<string, number>>((resolve, reject) => {
    child.once('message', (m) => resolve(m as Record<string, number>));
    child.once('exit', (code) => reject(new Error(`the driver exited (${code})`)));
  });
  const used = process.cpuUsage(before);
  child.kill();
  return { msPerRequest: (used.user + used.system) / 1000 / batch.count, statuses };
}

/** A dev server, the sandbox bank (with the account every payment charges) and a worker, as processes. */
async function startEngine(dir: string, supervisor: Supervisor): Promise<string> {
  const temporal = await startDevServer({
    bin: ensureTemporalCli(),
    dbFile: join(dir, 'temporal.db'),
    port: await freePort(),
    headless: true,
    logLevel: 'error',
    retentionMs: 24 * 3_600_000,
    supervisor,
  });
  const bankPort = await freePort();
  const stack = {
    temporal: { address: temporal.address, namespace: 'default' },
    taskQueue: 'admission-cpu',
    bank: { host: '127.0.0.1', port: bankPort, db: join(dir, 'bank.db') },
    reservations: { port: 9 },
    worker: { metricsAddress: 'off' },
  };
  const bank = supervisor.add({
    name: 'bank',
    command: { entry: PART_ENTRY.bank },
    env: partEnv(stack, 'bank'),
    ready: lineProbe('bank listening'),
  });
  const worker = supervisor.add({
    name: 'worker',
    command: { entry: PART_ENTRY.worker },
    env: partEnv(stack, 'worker'),
    ready: lineProbe('worker ready'),
    readyTimeoutMs: 180_000,
  });
  await bank.start();
  await worker.start();
  await fetch(`http://127.0.0.1:${bankPort}/accounts`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ id: ACCOUNT, balance: 1_000_000_000, currency: 'EUR' }),
  });
  return temporal.address;
}

/** Starts an API here (this process's CPU is what is measured) on `taskQueue`; resolves with its URL. */
type StartApi = (taskQueue: string, env: Record<string, string>) => Promise<string>;

function apiStarter(dir: string, client: Client, closers: (() => Promise<unknown>)[]): StartApi {
  return async (taskQueue, env) => {
    const config = loadApiConfig({
      RETRYSAFE_API_KEYS: API_KEYS,
      RETRYSAFE_TASK_QUEUE: taskQueue,
      RETRYSAFE_LIMITS_DB: join(dir, `limits-${taskQueue}.db`),
      LOG_LEVEL: 'info',
      ...env,
    });
    // The API's own logger at info, as shipped (its redaction and trace fields included): each
    // request's log lines are part of its cost. Written to /dev/null, asynchronously as to stdout.
    const logger = createLogger('api', {
      level: 'info',
      pretty: false,
      destination: pino.destination({ dest: '/dev/null', sync: false }),
    });
    const app = buildApp({ config, client, namespace: 'default', logger });
    await app.listen({ host: '127.0.0.1', port: 0 });
    closers.push(() => app.close());
    return `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
  };
}

type Report = (what: string, m: { msPerRequest: number; statuses: Record<string, number> }) => void;

/** The refusals: the floor (a malformed key), the flood over its rate, the flood at its share of an in-flight limit of one. */
async function measureRefusals(api: StartApi, refusals: number, report: Report): Promise<string> {
  // A fixed in-flight limit here (floor = ceiling): what is measured is the cost of a request,
  // not where this machine's load moves the limit.
  const rated = await api('admission-cpu', { RETRYSAFE_TENANT_LIMITS: 'flood=1/h', RETRYSAFE_IN_FLIGHT_FLOOR: '64' });
  // Warm-up: JIT, connections, the flood's one operation of the hour.
  await measure({ url: rated, tenant: 'flood', count: 300, concurrency: 16, prefer: 'wait=10', tag: 'warm-flood' });
  await measure({ url: rated, tenant: 'steady', count: 20, concurrency: 1, prefer: 'wait=10', tag: 'warm-steady' });
  const flood = { url: rated, tenant: 'flood', count: refusals, concurrency: 16, prefer: 'wait=10' } as const;
  // The floor: the same auth and header checks, refused by the route before admission (a key with a space).
  report('400 idempotency_key_invalid (floor), c=16', await measure({ ...flood, tag: 'not a key' }));
  report('429 rate_limited (flood over 1/h), c=16', await measure({ ...flood, tag: 'rated' }));

  // An in-flight limit of one, held by an operation on a queue no worker polls.
  const bounded = await api('admission-cpu-idle', { RETRYSAFE_IN_FLIGHT_FLOOR: '1', RETRYSAFE_IN_FLIGHT_CEILING: '1' });
  const holder = fetch(`${bounded}/v1/payments`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${SECRETS.flood}`,
      'idempotency-key': 'holder',
      'content-type': 'application/json',
      prefer: 'wait=60',
    },
    body: JSON.stringify({ account: ACCOUNT, amount: 1, currency: 'EUR' }),
  });
  await new Promise((r) => setTimeout(r, 1_000));
  await measure({ ...flood, url: bounded, count: 300, tag: 'warm-busy' });
  report('503 engine_busy (flood at its share), c=16', await measure({ ...flood, url: bounded, tag: 'busy' }));
  void holder.catch(() => undefined);
  return rated;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { refusals: { type: 'string', default: '3000' }, accepted: { type: 'string', default: '200' } },
  });
  const refusals = Number(values.refusals);
  const accepted = Number(values.accepted);
  const dir = mkdtempSync(join(tmpdir(), 'retrysafe-admission-cpu-'));
  const supervisor = new Supervisor();
  const closers: (() => Promise<unknown>)[] = [];
  try {
    const connection = await Connection.connect({ address: await startEngine(dir, supervisor) });
    closers.push(() => connection.close());
    const api = apiStarter(dir, new Client({ connection, namespace: 'default' }), closers);
    const rows: string[] = [];
    const report: Report = (what, m) =>
      rows.push(`${what.padEnd(44)} ${m.msPerRequest.toFixed(3).padStart(7)} ms CPU/request   ${JSON.stringify(m.statuses)}`);

    const rated = await measureRefusals(api, refusals, report);
    for (const c of [1, 8]) {
      report(
        `accepted new payment (steady), c=${c}`,
        await measure({ url: rated, tenant: 'steady', count: accepted, concurrency: c, prefer: 'wait=10', tag: `ok-c${c}` }),
      );
    }
    console.log(rows.join('\n'));
    console.log(
      `load average ${loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')}`,
    );
  } finally {
    for (const close of closers.reverse()) await close().catch(() => undefined);
    await supervisor.stopAll();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[2] === '--drive') {
  const batch = JSON.parse(process.argv[3]!) as Batch;
  process.send!('ready');
  process.once('message', () => {
    void drive(batch).then((statuses) => process.send!(statuses));
  });
} else {
  main().then(
    () => process.exit(0),
    (err) => {
      console.error(err);
      process.exit(1);
    },
  );
}
