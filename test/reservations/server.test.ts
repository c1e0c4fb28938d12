// The real entry point as a process: configuration, seeding, persistence across a
// restart, and a clean stop on SIGTERM. tsx is signalled directly (not through npx), so
// the signal reaches the service and its exit code is the test's to read.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { uniqueKey } from './helpers.js';

const root = resolve(import.meta.dirname, '../..');
const tsx = join(root, 'node_modules', '.bin', 'tsx');
const dir = mkdtempSync(join(tmpdir(), 'retrysafe-rsv-server-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

interface Running {
  child: ChildProcess;
  url: string;
  output: () => string;
}

function start(env: Record<string, string>): Promise<Running> {
  const child = spawn(tsx, ['downstream/reservations/server.ts'], {
    cwd: root,
    env: {
      ...process.env,
      LOG_PRETTY: '',
      SANDBOX_FAULTS: '',
      RESERVATIONS_PORT: '0',
      RESERVATIONS_DB: join(dir, 'reservations.db'),
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  return new Promise((resolveStart, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`reservations did not start:\n${out}`));
    }, 20_000);
    const onData = (chunk: Buffer) => {
      out += chunk.toString();
      const match = /reservations listening at (http:\/\/[^"\s]+)/.exec(out);
      if (match) {
        clearTimeout(timer);
        resolveStart({ child, url: match[1]!, output: () => out });
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(Object.assign(new Error(`reservations exited with ${code}:\n${out}`), { exitCode: code, output: out }));
    });
  });
}

function stop(running: Running, signal: NodeJS.Signals = 'SIGTERM'): Promise<number | null> {
  return new Promise((resolveStop) => {
    running.child.once('exit', (code) => resolveStop(code));
    running.child.kill(signal);
  });
}

const hold = (url: string, key: string) =>
  fetch(`${url}/reservations`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'idempotency-key': key },
    body: JSON.stringify({ items: [{ sku: 'sku_book', quantity: 2 }] }),
  });

describe('downstream/reservations/server.ts', () => {
  it('seeds once, keeps its ledger across a restart and stops cleanly on SIGTERM and SIGINT', { timeout: 60_000 }, async () => {
    const first = await start({});
    const key = uniqueKey();
    expect(await (await fetch(`${first.url}/inventory/sku_rare`)).json()).toEqual({ sku: 'sku_rare', available: 1, held: 0 });
    expect((await hold(first.url, key)).status).toBe(201);
    expect(first.output()).toMatch(/"msg":"reservations listening at http:\/\/127\.0\.0\.1:\d+"/);
    expect(await stop(first)).toBe(0);
    expect(first.output()).toContain('reservations stopping');

    const second = await start({});
    try {
      // Not re-seeded: the hold is still there, and so is its stock's absence.
      const book = await (await fetch(`${second.url}/inventory/sku_book`)).json();
      expect(book).toEqual({ sku: 'sku_book', available: 98, held: 2 });
      const replay = await hold(second.url, key);
      expect(replay.status).toBe(201);
      expect(replay.headers.get('idempotent-replayed')).toBe('true');
      expect((await fetch(`${second.url}/_faults`)).status).toBe(404);
    } finally {
      expect(await stop(second, 'SIGINT')).toBe(0);
    }
  });

  it('with SANDBOX_FAULTS=1, serves /_faults and says so in its log', { timeout: 30_000 }, async () => {
    const running = await start({ SANDBOX_FAULTS: '1', RESERVATIONS_DB: join(dir, 'faults.db') });
    try {
      expect((await fetch(`${running.url}/_faults`)).status).toBe(200);
      expect(running.output()).toContain('fault injection enabled');
    } finally {
      expect(await stop(running)).toBe(0);
    }
  });

  it('refuses bad configuration with one line per variable and exit code 1', { timeout: 30_000 }, async () => {
    const failure = await start({ RESERVATIONS_PORT: 'abc', KEY_TTL: 'soon' }).then(
      () => expect.fail('started with a bad configuration'),
      (err: { exitCode: number; output: string }) => err,
    );
    expect(failure.exitCode).toBe(1);
    expect(failure.output).toContain('RESERVATIONS_PORT="abc"');
    expect(failure.output).toContain('KEY_TTL="soon"');
  });
});
