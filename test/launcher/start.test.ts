// `npm start` as a user runs it: the real launcher, a real dev server, bank, worker and
// API on free ports and a temporary data dir. Checks the banner, a payment end to end, a
// clean stop with no process left behind (even after a SIGKILL of the launcher), data
// surviving a restart, --reset, a part that dies and is restarted, and the refusals (bad
// flag, bad variable, busy port, a part that cannot start).
import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  childRunning,
  descendants,
  freeStackPorts,
  isAlive,
  LauncherProcess,
  processesMentioning,
  useLaunchers,
  type StackPorts,
} from './harness.js';

const BANNER = /retrysafe is ready in (\d+(?:\.\d+)?) s[\s\S]*Ctrl-C stops everything/;
// Bounds, not expectations: a 2-core machine shared with other test runs starts the five
// parts one after the other in well under a minute, but not always.
const START_TIMEOUT = 150_000;
const STACK_TEST = { timeout: 300_000 };

const launchers = useLaunchers('retrysafe-launcher-');
const launch = launchers.launch;

/** SIGTERM, then: exit 0 within 20 s, and nothing it started still running. */
async function stopCleanly(launcher: LauncherProcess, markers: string[]): Promise<void> {
  const family = descendants(launcher.pid);
  expect(family.length).toBeGreaterThanOrEqual(4); // temporal, bank, worker, api
  launcher.child.kill('SIGTERM');
  const result = await launcher.exit(25_000);
  launchers.stopped(launcher);
  expect(result.timedOut, launcher.tail()).toBe(false);
  expect(result.ms).toBeLessThan(20_000);
  expect(result.code, launcher.tail()).toBe(0);
  expect(launcher.output).toMatch(/\[retrysafe\] stopped/);
  await sleep(300);
  expect(family.filter(isAlive)).toEqual([]);
  expect(processesMentioning(markers)).toEqual([]);
}

async function getJson(url: string, init?: RequestInit): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(url, { ...init, signal: AbortSignal.timeout(30_000) });
  const text = await res.text();
  return { status: res.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
}

describe('npm start', STACK_TEST, () => {
  let ports: StackPorts;
  let dataDir: string;
  let markers: string[];
  const key = `launcher-${randomUUID()}`;
  const readyTimes: number[] = [];

  beforeAll(async () => {
    ports = await freeStackPorts();
    dataDir = launchers.dir('stack-data');
    markers = [dataDir, `API_PORT=${ports.api}`, `--port ${ports.temporal}`];
  });

  afterAll(() => {
    if (readyTimes.length > 0)
      console.log(`launcher: banner's time to ready per start: ${readyTimes.map((t) => `${t} s`).join(', ')}`);
  });

  it('brings the stack up, prints every URL once, makes a payment, and stops cleanly on SIGTERM', async () => {
    const launcher = launch([], dataDir, ports);
    const banner = await launcher.waitFor(BANNER, START_TIMEOUT);
    readyTimes.push(Number(banner[1]));
    const text = banner[0];
    const api = `http://localhost:${ports.api}`;
    for (const expected of [
      api,
      `${api}/docs`,
      `${api}/openapi.json`,
      `http://localhost:${ports.ui}`,
      `127.0.0.1:${ports.temporal}`,
      `http://localhost:${ports.bank}`,
      `http://127.0.0.1:${ports.metrics}/metrics`,
      dataDir,
      '7 days',
      'dev mode',
      `curl -s -X POST ${api}/v1/payments`,
    ]) {
      expect(text).toContain(expected);
    }
    expect(launcher.output.match(/retrysafe is ready/g)).toHaveLength(1);
    // Parts started in order, each after the previous one was ready.
    const order = [
      'temporal ready',
      'starting bank',
      'bank ready',
      'starting worker',
      'worker ready (',
      'starting api',
      'api ready',
    ];
    const positions = order.map((s) => launcher.output.indexOf(`[retrysafe] ${s}`));
    expect(positions.every((p) => p >= 0)).toBe(true);
    expect([...positions].sort((a, b) => a - b)).toEqual(positions);

    const base = `http://127.0.0.1:${ports.api}`;
    expect((await fetch(`${base}/readyz`)).status).toBe(200);
    expect((await fetch(`http://127.0.0.1:${ports.metrics}/metrics`)).status).toBe(200);
    const payment = await getJson(`${base}/v1/payments`, {
      method: 'POST',
      headers: { 'Idempotency-Key': key, 'Content-Type': 'application/json', Prefer: 'wait=20' },
      body: JSON.stringify({ account: 'acc_alice', amount: 1250, currency: 'EUR' }),
    });
    expect(payment.status, JSON.stringify(payment.body)).toBe(200);
    expect(payment.body).toMatchObject({ key, type: 'payment', status: 'succeeded' });

    await stopCleanly(launcher, markers);
    // Reverse order: the API first, Temporal last.
    const stops = ['api stopped', 'worker stopped', 'bank stopped', 'temporal stopped'].map((s) =>
      launcher.output.indexOf(`[retrysafe] ${s}`),
    );
    expect(stops.every((p) => p >= 0)).toBe(true);
    expect([...stops].sort((a, b) => a - b)).toEqual(stops);
  });

  let leftoverDevServer: number | undefined;

  it('finds the earlier operation after a restart; killed outright, its Node children still stop', async () => {
    const launcher = launch([], dataDir, ports);
    readyTimes.push(Number((await launcher.waitFor(BANNER, START_TIMEOUT))[1]));
    const op = await getJson(`http://127.0.0.1:${ports.api}/v1/operations/${key}`);
    expect(op.status).toBe(200);
    expect(op.body).toMatchObject({ key, status: 'succeeded' });

    // SIGKILL runs no exit hook: the bank, worker and API notice they were re-parented
    // (orphan guard) and stop themselves; the dev server is left for the next start.
    const lock = JSON.parse(readFileSync(join(dataDir, 'launcher.lock'), 'utf8')) as { temporal: number };
    const family = descendants(launcher.pid).filter((pid) => pid !== lock.temporal);
    expect(family.length).toBeGreaterThanOrEqual(3);
    launcher.child.kill('SIGKILL');
    await launcher.exit(5_000);
    launchers.stopped(launcher);
    const deadline = Date.now() + 15_000;
    while (family.some(isAlive) && Date.now() < deadline) await sleep(200);
    expect(family.filter(isAlive)).toEqual([]);
    leftoverDevServer = lock.temporal;
  });

  it('with --reset, stops a dev server left behind, then starts from empty data', async () => {
    const launcher = launch(['--reset'], dataDir, ports);
    readyTimes.push(Number((await launcher.waitFor(BANNER, START_TIMEOUT))[1]));
    if (leftoverDevServer !== undefined) {
      expect(launcher.output).toContain(`stopped the Temporal dev server (pid ${leftoverDevServer})`);
      expect(isAlive(leftoverDevServer)).toBe(false);
    }
    expect(launcher.output).toContain(`--reset: deleted ${dataDir}`);
    const op = await getJson(`http://127.0.0.1:${ports.api}/v1/operations/${key}`);
    expect(op.status).toBe(404);
    expect(op.body.code).toBe('operation_not_found');
    await stopCleanly(launcher, markers);
  });
});

async function pay(ports: StackPorts, key: string, amount: number) {
  return getJson(`http://127.0.0.1:${ports.api}/v1/payments`, {
    method: 'POST',
    headers: { 'Idempotency-Key': key, 'Content-Type': 'application/json', Prefer: 'wait=30' },
    body: JSON.stringify({ account: 'acc_alice', amount, currency: 'EUR' }),
  });
}

describe('when a part dies', STACK_TEST, () => {
  it('restarts the bank after a SIGKILL, says so, and payments still work on the same ledger', async () => {
    const ports = await freeStackPorts();
    const dataDir = launchers.dir('bank-killed');
    const launcher = launch([], dataDir, ports);
    await launcher.waitFor(BANNER, START_TIMEOUT);
    const before = `before-${randomUUID()}`;
    expect((await pay(ports, before, 1_000)).body).toMatchObject({ key: before, status: 'succeeded' });

    const killed = childRunning(launcher.pid, 'downstream/bank/server.ts');
    expect(killed).toBeDefined();
    process.kill(killed!, 'SIGKILL');
    await launcher.waitFor(/\[retrysafe\] bank was killed by SIGKILL unexpectedly; restarting it in \d+\.\d s/, 30_000);
    await launcher.waitFor(/\[retrysafe\] bank ready again after a restart/, START_TIMEOUT);
    const restarted = childRunning(launcher.pid, 'downstream/bank/server.ts');
    expect(restarted).toBeDefined();
    expect(restarted).not.toBe(killed);

    const after = `after-${randomUUID()}`;
    expect((await pay(ports, after, 250)).body).toMatchObject({ key: after, status: 'succeeded' });
    // The restarted bank kept its ledger: the first charge is there, and both moved money once.
    const bank = `http://127.0.0.1:${ports.bank}`;
    expect((await getJson(`${bank}/charges/${encodeURIComponent(`default/${before}/charge`)}`)).body).toMatchObject({
      status: 'captured',
      amount: 1_000,
    });
    expect((await getJson(`${bank}/accounts/acc_alice`)).body.balance).toBe(1_000_000 - 1_000 - 250);
    await stopCleanly(launcher, [dataDir, `API_PORT=${ports.api}`, `--port ${ports.temporal}`]);
  });

  it('stops the stack with a last line naming the part when it cannot start three times in a row', async () => {
    const ports = await freeStackPorts();
    const dataDir = launchers.dir('bank-broken-later');
    const launcher = launch([], dataDir, ports);
    await launcher.waitFor(BANNER, START_TIMEOUT);
    // From now on the bank cannot open its database (a directory where the file was):
    // the running bank keeps its open file until it is killed; every restart fails.
    renameSync(join(dataDir, 'bank.db'), join(dataDir, 'bank.db.moved'));
    mkdirSync(join(dataDir, 'bank.db'));
    process.kill(childRunning(launcher.pid, 'downstream/bank/server.ts')!, 'SIGKILL');

    const result = await launcher.exit(150_000);
    launchers.stopped(launcher);
    expect(result.code, launcher.tail()).toBe(1);
    expect(launcher.output).toContain('[retrysafe] bank was killed by SIGKILL unexpectedly; restarting it');
    expect(launcher.output).toMatch(
      /\[retrysafe\] bank did not start: exited with code 1 before it was ready.*\(attempt 2 of 3\)/,
    );
    expect(launcher.output).toMatch(/\[retrysafe\] bank did not start: .*\(attempt 3 of 3\)/);
    expect(launcher.output).toContain('[retrysafe] temporal stopped');
    const lines = launcher.output.trim().split('\n');
    expect(lines.at(-1)).toMatch(
      /^retrysafe: could not restart bank: exited with code 1 before it was ready.* \(3 attempts in a row\); stopped the rest$/,
    );
    expect(processesMentioning([dataDir, `--port ${ports.temporal}`])).toEqual([]);
  });
});

describe('refusals', STACK_TEST, () => {
  it('answers an unknown flag with one line and the usage, exit 2', async () => {
    const ports = await freeStackPorts();
    const dataDir = launchers.dir('bad-flag');
    const launcher = launch(['--bogus'], dataDir, ports);
    const result = await launcher.exit(20_000);
    expect(result.code).toBe(2);
    expect(launcher.output).toMatch(/^retrysafe: unknown option '--bogus'$/m);
    expect(launcher.output).toMatch(/^Usage: npm start/m);
    expect(existsSync(dataDir)).toBe(false);
  });

  it('refuses RETRYSAFE_RETENTION=forever, naming the variable, exit 2 and nothing started', async () => {
    const ports = await freeStackPorts();
    const dataDir = launchers.dir('bad-retention');
    const launcher = launch([], dataDir, ports, { RETRYSAFE_RETENTION: 'forever', API_PORT: 'abc' });
    const result = await launcher.exit(20_000);
    expect(result.code).toBe(2);
    expect(launcher.output).toMatch(/RETRYSAFE_RETENTION="forever": .*not a duration/);
    expect(launcher.output).toMatch(/API_PORT="abc"/);
    expect(launcher.output).toContain('Nothing was started.');
    expect(launcher.output).not.toContain('starting temporal');
    expect(existsSync(dataDir)).toBe(false);
  });

  it('refuses a retention below the dev server floor of one hour', async () => {
    const ports = await freeStackPorts();
    const launcher = launch([], launchers.dir('short-retention'), ports, { RETRYSAFE_RETENTION: '30m' });
    expect((await launcher.exit(20_000)).code).toBe(2);
    expect(launcher.output).toMatch(/RETRYSAFE_RETENTION="30m": "30m" is below the minimum of 1 hour/);
  });

  it('names the part whose port is already in use, before starting anything', async () => {
    const ports = await freeStackPorts();
    const dataDir = launchers.dir('busy-port');
    const holder: Server = createServer();
    await new Promise<void>((resolve) => holder.listen(ports.api, '127.0.0.1', resolve));
    try {
      const launcher = launch([], dataDir, ports);
      const result = await launcher.exit(20_000);
      expect(result.code).toBe(1);
      expect(launcher.output).toMatch(
        new RegExp(`^retrysafe: could not start api: API HTTP port ${ports.api} on 127.0.0.1 is already in use`, 'm'),
      );
      expect(launcher.output).not.toContain('starting temporal');
    } finally {
      await new Promise((r) => holder.close(r));
    }
  });

  it('when a part cannot start three times in a row, stops what was started, names the part and exits 1', async () => {
    const ports = await freeStackPorts();
    const dataDir = launchers.dir('broken-bank');
    mkdirSync(join(dataDir, 'bank.db'), { recursive: true }); // a directory: SQLite cannot open it
    const launcher = launch([], dataDir, ports);
    const result = await launcher.exit(150_000);
    launchers.stopped(launcher);
    expect(result.code, launcher.tail()).toBe(1);
    expect(launcher.output).toContain('[retrysafe] temporal stopped');
    const lines = launcher.output.trim().split('\n');
    expect(lines.at(-1)).toMatch(/^retrysafe: could not start bank: exited with code 1 before it was ready/);
    // Tried again with back-off before giving up, and said so.
    expect(launcher.output).toMatch(/\[retrysafe\] bank did not start: .*; trying again in \d+\.\d s \(attempt 2 of 3\)/);
    expect(lines.at(-1)).toMatch(/\(3 attempts in a row\)$/);
    expect(processesMentioning([dataDir, `--port ${ports.temporal}`])).toEqual([]);
  });
});
