// The tenants' rate windows in their real stores, under two API instances and real
// operations: a PostgreSQL of the test's own (initdb in a temporary folder, started like the
// cluster starts its own, tools/postgres.ts), and a SQLite file. One tenant's requests go to
// both instances in turn and the accepted count stays within its limit; then the store
// fails under load (PostgreSQL stopped; the SQLite file locked by another connection, then
// corrupted) and: replays still answer at once, /healthz never waits, new operations follow
// the stated fallback (each instance counts the tenant's quota on its own), nothing accepted
// is lost or doubled; and the shared count is back once the store is.
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureDatabase, initPostgres, postgresCommand, postgresReady, postgresUrl } from '../../tools/postgres.js';
import { Part } from '../../tools/supervisor/part.js';
import { freePort } from '../../tools/supervisor/ports.js';
import { startApi, type ApiAnswer, type ApiHandle } from '../support/api.js';
import { useFullStack } from '../support/full-stack.js';
import { uniqueId } from '../support/stack.js';

const SECRETS = { acme: 'sk_acme_0123456789abcdef', beta: 'sk_beta_0123456789abcdef' };
const API_KEYS = `${SECRETS.acme}=acme,${SECRETS.beta}=beta`;
type Tenant = keyof typeof SECRETS;
const AMOUNT = 100;
/** Each tenant's quota in these tests: per hour, so no window ends during a test. */
const QUOTA = 6;

const stack = useFullStack({ name: 'limits-stores', reservations: false, faults: false, apiKeys: API_KEYS });
let dir: string;
const apis: ApiHandle[] = [];

beforeAll(() => {
  // Not under the run's private folder: PostgreSQL runs as its own user when the tests run
  // as root, and must reach its folder.
  dir = mkdtempSync(join(tmpdir(), 'retrysafe-limits-stores-'));
  chmodSync(dir, 0o755);
});

afterAll(async () => {
  await Promise.all(apis.map((a) => a.close()));
  rmSync(dir, { recursive: true, force: true });
});

async function twoApis(env: Record<string, string>): Promise<[ApiHandle, ApiHandle]> {
  const started = await Promise.all(
    [0, 1].map(() =>
      startApi({
        taskQueue: stack.taskQueue,
        apiKeys: API_KEYS,
        env: { RETRYSAFE_TENANT_LIMITS: `*=${QUOTA}/h`, RETRYSAFE_LIMITS_TIMEOUT: '400ms', ...env },
      }),
    ),
  );
  apis.push(...started);
  return started as [ApiHandle, ApiHandle];
}

function pay(api: ApiHandle, account: string, key: string, tenant: Tenant = 'acme'): Promise<ApiAnswer> {
  return api.request('POST', '/v1/payments', {
    body: { account, amount: AMOUNT, currency: 'EUR' },
    headers: { authorization: `Bearer ${SECRETS[tenant]}`, 'idempotency-key': key, prefer: 'wait=20' },
  });
}

async function shared(api: ApiHandle): Promise<number> {
  // The operators' view: a scrape from this machine needs no key (a tenant's is refused).
  const res = await fetch(`${api.url}/metrics`);
  const line = (await res.text()).split('\n').find((l) => l.startsWith('retrysafe_rate_windows_shared '));
  return Number(line?.split(' ')[1]);
}

/** One tenant's new operations sent to both instances in turn: accepted within the quota, the rest 429. */
async function withinQuotaAcrossInstances(pair: [ApiHandle, ApiHandle], account: string): Promise<string[]> {
  const answers: ApiAnswer[] = [];
  const keys: string[] = [];
  for (let i = 0; i < QUOTA + 4; i++) {
    const key = uniqueId('turn');
    keys.push(key);
    answers.push(await pay(pair[i % 2]!, account, key));
  }
  const accepted = answers.filter((a) => a.status === 200);
  expect(accepted).toHaveLength(QUOTA);
  expect(answers.slice(QUOTA).map((a) => a.status)).toEqual([429, 429, 429, 429]);
  for (const a of answers.slice(QUOTA)) expect(a.headers.get('ratelimit')).toMatch(/^"tenant";r=0;t=\d+$/);
  return keys.slice(0, QUOTA);
}

/**
 * The store fails (`breakStore`) while both instances take acme's replays, health probes and
 * beta's new operations (beta has its whole quota left), and comes back (`repairStore`).
 */
async function underStoreFailure(
  pair: [ApiHandle, ApiHandle],
  account: string,
  done: string[],
  breakStore: () => Promise<void>,
  repairStore: () => Promise<void>,
): Promise<void> {
  const before = await Promise.all(done.map((key, i) => pay(pair[i % 2]!, account, key)));
  // Each instance has answered the finished ones once: they are in its cache now.
  await Promise.all(done.map((key, i) => pay(pair[(i + 1) % 2]!, account, key)));
  await breakStore();

  const replays: { ms: number; answer: ApiAnswer; i: number }[] = [];
  const health: number[] = [];
  const fresh: { key: string; answer: ApiAnswer }[] = [];
  let sending = true;
  await Promise.all([
    (async () => {
      // More than a quota per instance: enough to see each one count on its own.
      for (let i = 0; i < 2 * QUOTA + 6; i++) {
        const key = uniqueId('during');
        fresh.push({ key, answer: await pay(pair[i % 2]!, account, key, 'beta') });
      }
      sending = false;
    })(),
    (async () => {
      for (let i = 0; sending; i++) {
        const t = performance.now();
        const answer = await pay(pair[i % 2]!, account, done[i % done.length]!);
        replays.push({ ms: performance.now() - t, answer, i: i % done.length });
      }
    })(),
    (async () => {
      for (let i = 0; sending; i++) {
        const t = performance.now();
        const res = await fetch(`${pair[i % 2]!.url}/healthz`);
        expect(res.status).toBe(200);
        health.push(performance.now() - t);
        await sleep(20);
      }
    })(),
  ]);

  // Replays of what each instance knows: answered, the same outcome, without waiting on the store.
  expect(replays.length).toBeGreaterThan(10);
  for (const r of replays) {
    expect(r.answer.status).toBe(200);
    expect(r.answer.body).toEqual(before[r.i]!.body);
    expect(r.ms).toBeLessThan(1_000);
  }
  // /healthz never waited on the store.
  expect(health.length).toBeGreaterThan(10);
  expect(Math.max(...health)).toBeLessThan(500);
  // New operations: the stated fallback, each instance counting beta's quota on its own (so
  // more than one quota, at most one per instance). Every answer honest, never a 5xx.
  for (const f of fresh) expect([200, 429]).toContain(f.answer.status);
  const accepted = fresh.filter((f) => f.answer.status === 200);
  expect(accepted.length).toBeGreaterThan(QUOTA);
  expect(accepted.length).toBeLessThanOrEqual(QUOTA * 2);
  for (const f of fresh.filter((f) => f.answer.status === 429)) expect(f.answer.headers.get('retry-after')).toMatch(/^\d+$/);
  expect(await Promise.all(pair.map(shared))).toEqual([0, 0]);

  // Nothing lost, nothing doubled: each accepted operation succeeded once, and the bank moved exactly that.
  for (const f of accepted) expect(f.answer.body).toMatchObject({ key: f.key, status: 'succeeded' });
  const charged = done.length + accepted.length;
  expect(await stack.bank.balance(account)).toBe(1_000_000 - charged * AMOUNT);

  // The store back: the next calls find it (after the instance's back-off) and the count is shared again.
  await repairStore();
  await expect
    .poll(
      async () => {
        await pay(pair[0], account, uniqueId('after'), 'beta');
        await pay(pair[1], account, uniqueId('after'), 'beta');
        return Promise.all(pair.map(shared));
      },
      { timeout: 45_000, interval: 1_000 },
    )
    .toEqual([1, 1]);
}

describe('PostgreSQL (RETRYSAFE_LIMITS_URL)', () => {
  let postgres: Part;
  let url: string;

  beforeAll(async () => {
    const dataDir = join(dir, 'postgres');
    const port = await freePort();
    initPostgres({ dataDir, port, maxConnections: 50 });
    const command = postgresCommand({ dataDir, port });
    postgres = new Part({
      name: 'postgres',
      command: { bin: command.file, args: command.args },
      cwd: dataDir,
      ...(command.uid !== undefined ? { uid: command.uid, gid: command.gid } : {}),
      stopSignal: 'SIGINT',
      stopGraceMs: 10_000,
      ready: (ctx) => ctx.poll('PostgreSQL to accept connections', async () => postgresReady(port), 250),
      readyTimeoutMs: 60_000,
    });
    await postgres.start();
    ensureDatabase(port, 'retrysafe_limits');
    url = postgresUrl(port, 'retrysafe_limits');
  }, 120_000);

  afterAll(async () => {
    await postgres?.stop();
  });

  it('is one quota for two instances, and a stop under load loses nothing and stalls no replay', async () => {
    const account = uniqueId('acc');
    await stack.bank.openAccount(account, 1_000_000);
    const pair = await twoApis({ RETRYSAFE_LIMITS_URL: url });
    const done = await withinQuotaAcrossInstances(pair, account);
    expect(await Promise.all(pair.map(shared))).toEqual([1, 1]);
    await underStoreFailure(
      pair,
      account,
      done,
      async () => void (await postgres.stop()),
      () => postgres.start(),
    );
  });
});

describe('SQLite (RETRYSAFE_LIMITS_DB)', () => {
  it('is one quota for two instances; locked, then corrupt, it loses nothing and stalls no replay; an instance starts on the corrupt file', async () => {
    const account = uniqueId('acc');
    await stack.bank.openAccount(account, 1_000_000);
    const file = join(dir, 'limits.db');
    const pair = await twoApis({ RETRYSAFE_LIMITS_DB: file });
    const done = await withinQuotaAcrossInstances(pair, account);
    let locker: Database.Database | undefined;
    await underStoreFailure(
      pair,
      account,
      done,
      async () => {
        // Another connection holds the write lock, then the file is overwritten with garbage.
        locker = new Database(file);
        locker.exec('BEGIN EXCLUSIVE');
        setTimeout(() => {
          locker?.exec('ROLLBACK');
          locker?.close();
          locker = undefined;
          writeFileSync(file, Buffer.alloc(16_384, 0x5a));
          rmSync(`${file}-wal`, { force: true });
          rmSync(`${file}-shm`, { force: true });
        }, 1_500);
        await sleep(100);
      },
      async () => {
        // A corrupt instance of the file is only replaced: the API opens it again on its own.
        await sleep(2_000);
        rmSync(file, { force: true });
      },
    );
    // An instance started on a corrupt file starts, and counts on its own.
    writeFileSync(file, Buffer.alloc(16_384, 0x5a));
    rmSync(`${file}-wal`, { force: true });
    rmSync(`${file}-shm`, { force: true });
    const [late] = await twoApis({ RETRYSAFE_LIMITS_DB: file });
    expect(await shared(late)).toBe(0);
    expect((await pay(late, account, uniqueId('late'))).status).toBe(200);
  });
});
