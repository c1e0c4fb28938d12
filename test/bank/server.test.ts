// The real entry point as a process: configuration, seeding, persistence across a
// restart, and a clean stop on SIGTERM.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { uniqueKey } from './helpers.js';

const root = resolve(import.meta.dirname, '../..');
const tsx = join(root, 'node_modules', '.bin', 'tsx');
const dir = mkdtempSync(join(tmpdir(), 'retrysafe-bank-server-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

interface Running {
  child: ChildProcess;
  url: string;
  output: () => string;
}

function start(env: Record<string, string>): Promise<Running> {
  const child = spawn(tsx, ['downstream/bank/server.ts'], {
    cwd: root,
    env: { ...process.env, LOG_PRETTY: '', BANK_PORT: '0', BANK_DB: join(dir, 'bank.db'), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  return new Promise((resolveStart, reject) => {
    const timer = setTimeout(() => reject(new Error(`bank did not start:\n${out}`)), 20_000);
    const onData = (chunk: Buffer) => {
      out += chunk.toString();
      const match = /bank listening at (http:\/\/[^"\s]+)/.exec(out);
      if (match) {
        clearTimeout(timer);
        resolveStart({ child, url: match[1]!, output: () => out });
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(Object.assign(new Error(`bank exited with ${code}:\n${out}`), { exitCode: code, output: out }));
    });
  });
}

function stop(running: Running): Promise<number | null> {
  return new Promise((resolveStop) => {
    running.child.once('exit', (code) => resolveStop(code));
    running.child.kill('SIGTERM');
  });
}

describe('downstream/bank/server.ts', () => {
  it('seeds once, keeps its ledger across a restart and stops cleanly on SIGTERM', { timeout: 60_000 }, async () => {
    const first = await start({});
    const key = uniqueKey();
    const charge = () =>
      fetch(`${first.url}/charges`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'idempotency-key': key },
        body: JSON.stringify({ account: 'acc_alice', amount: 1250, currency: 'EUR' }),
      });
    expect((await charge()).status).toBe(201);
    expect(first.output()).toMatch(/"msg":"bank listening at http:\/\/127\.0\.0\.1:\d+"/);
    expect(await stop(first)).toBe(0);
    expect(first.output()).toContain('bank stopping');

    const second = await start({});
    try {
      const alice = await (await fetch(`${second.url}/accounts/acc_alice`)).json();
      expect(alice).toEqual({ id: 'acc_alice', currency: 'EUR', balance: 1_000_000 - 1250 });
      const replay = await fetch(`${second.url}/charges`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'idempotency-key': key },
        body: JSON.stringify({ account: 'acc_alice', amount: 1250, currency: 'EUR' }),
      });
      expect(replay.status).toBe(201);
      expect(replay.headers.get('idempotent-replayed')).toBe('true');
      expect((await fetch(`${second.url}/_faults`)).status).toBe(404);
    } finally {
      expect(await stop(second)).toBe(0);
    }
  });

  it('refuses bad configuration with one line per variable and exit code 1', { timeout: 30_000 }, async () => {
    const failure = await start({ BANK_PORT: 'abc', KEY_TTL: 'soon' }).then(
      () => expect.fail('started with a bad configuration'),
      (err: { exitCode: number; output: string }) => err,
    );
    expect(failure.exitCode).toBe(1);
    expect(failure.output).toContain('BANK_PORT="abc"');
    expect(failure.output).toContain('KEY_TTL="soon"');
  });
});
