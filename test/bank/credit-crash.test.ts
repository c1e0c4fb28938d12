// The bank as a real process, killed (SIGKILL) the instant a credit or a credit reversal
// commits: after a restart, the retry finds the effect there once. In the stack tier, as
// every test that spawns a sandbox process.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  caller,
  sandboxKey,
  startSandboxProcess,
  stopSandboxProcess,
  type Call,
  type SandboxProcess,
} from '../support/sandbox-harness.js';

const dir = mkdtempSync(join(tmpdir(), 'retrysafe-bank-crash-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const start = (db: string) =>
  startSandboxProcess('bank', 'downstream/bank/server.ts', { BANK_PORT: '0', BANK_DB: db, SANDBOX_FAULTS: '1' });

/** Arms crashAfterCommit, sends `request`, and waits for the process to die of it. */
async function crashOn(running: SandboxProcess, request: (call: Call) => Promise<unknown>): Promise<void> {
  const exited = new Promise<void>((done) => running.child.once('close', () => done()));
  const call = caller(running.url);
  expect((await call('PUT', '/_faults', { body: { crashAfterCommit: 1 } })).status).toBe(200);
  await expect(request(call)).rejects.toThrow();
  await exited;
  expect(running.output()).toContain('fault: committed, crashing now (SIGKILL)');
  expect(running.output()).not.toContain('bank stopping');
}

describe('crashAfterCommit on credits', () => {
  it(
    'a credit committed just before the crash is there once; the retry after a restart replays it',
    { timeout: 180_000 },
    async () => {
      const db = join(dir, 'credit.db');
      const key = sandboxKey('credit');
      const body = { account: 'acc_bob', amount: 300, currency: 'EUR' };
      await crashOn(await start(db), (call) => call('POST', '/credits', { key, body }));

      const second = await start(db);
      try {
        const call = caller(second.url);
        expect((await call('GET', '/accounts/acc_bob')).body).toMatchObject({ balance: 2_300 });
        const retry = await call('POST', '/credits', { key, body });
        expect(retry.status).toBe(201);
        expect(retry.headers.get('idempotent-replayed')).toBe('true');
        expect(retry.body).toMatchObject({ key, amount: 300, status: 'credited' });
        expect((await call('GET', '/accounts/acc_bob')).body).toMatchObject({ balance: 2_300 });
      } finally {
        expect(await stopSandboxProcess(second)).toBe(0);
      }
    },
  );

  it(
    'a credit reversal committed just before the crash took the money back once; the retry answers the same',
    { timeout: 180_000 },
    async () => {
      const db = join(dir, 'credit-reversal.db');
      const key = sandboxKey('credit');
      const first = await start(db);
      const credited = await caller(first.url)('POST', '/credits', {
        key,
        body: { account: 'acc_bob', amount: 300, currency: 'EUR' },
      });
      expect(credited.status).toBe(201);
      await crashOn(first, (call) => call('POST', `/credits/${encodeURIComponent(key)}/reverse`));

      const second = await start(db);
      try {
        const call = caller(second.url);
        expect((await call('GET', '/accounts/acc_bob')).body).toMatchObject({ balance: 2_000 });
        const retry = await call('POST', `/credits/${encodeURIComponent(key)}/reverse`);
        expect(retry.body).toEqual({ key, creditId: credited.body.id, status: 'reversed', reclaimed: 300 });
        expect((await call('GET', '/accounts/acc_bob')).body).toMatchObject({ balance: 2_000 });
      } finally {
        expect(await stopSandboxProcess(second)).toBe(0);
      }
    },
  );
});
