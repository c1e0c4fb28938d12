// The bank as a real process, killed (SIGKILL) the instant a credit or a credit reversal
// commits: after a restart, the retry finds the effect there once. In the stack tier, as
// every test that spawns a sandbox process.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PART_ENTRY, partEnv } from '../../tools/stack-env.js';
import {
  caller,
  sandboxKey,
  startSandboxProcess,
  stopSandboxProcess,
  type Call,
  useTempDirs,
  type SandboxProcess,
} from '../support/sandbox-harness.js';

const dir = useTempDirs('bank-crash')();

const start = (db: string) =>
  startSandboxProcess('bank', PART_ENTRY.bank, partEnv({ bank: { port: 0, db }, faults: true }, 'bank'));

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

/** Starts the bank again on `db`, hands `check` a caller, then stops it: a clean exit (0). */
async function afterRestart(db: string, check: (call: Call) => Promise<void>): Promise<void> {
  const again = await start(db);
  try {
    await check(caller(again.url));
  } finally {
    expect(await stopSandboxProcess(again)).toBe(0);
  }
}

describe('crashAfterCommit on credits', { timeout: 180_000 }, () => {
  it('a credit committed just before the crash is there once; the retry after a restart replays it', async () => {
    const db = join(dir, 'credit.db');
    const key = sandboxKey('credit');
    const body = { account: 'acc_bob', amount: 300, currency: 'EUR' };
    await crashOn(await start(db), (call) => call('POST', '/credits', { key, body }));

    await afterRestart(db, async (call) => {
      expect((await call('GET', '/accounts/acc_bob')).body).toMatchObject({ balance: 2_300 });
      const retry = await call('POST', '/credits', { key, body });
      expect(retry.status).toBe(201);
      expect(retry.headers.get('idempotent-replayed')).toBe('true');
      expect(retry.body).toMatchObject({ key, amount: 300, status: 'credited' });
      expect((await call('GET', '/accounts/acc_bob')).body).toMatchObject({ balance: 2_300 });
    });
  });

  it('a credit reversal committed just before the crash took the money back once; the retry answers the same', async () => {
    const db = join(dir, 'credit-reversal.db');
    const key = sandboxKey('credit');
    const first = await start(db);
    const credited = await caller(first.url)('POST', '/credits', {
      key,
      body: { account: 'acc_bob', amount: 300, currency: 'EUR' },
    });
    expect(credited.status).toBe(201);
    await crashOn(first, (call) => call('POST', `/credits/${encodeURIComponent(key)}/reverse`));

    await afterRestart(db, async (call) => {
      expect((await call('GET', '/accounts/acc_bob')).body).toMatchObject({ balance: 2_000 });
      const retry = await call('POST', `/credits/${encodeURIComponent(key)}/reverse`);
      expect(retry.body).toEqual({ key, creditId: credited.body.id, status: 'reversed', reclaimed: 300 });
      expect((await call('GET', '/accounts/acc_bob')).body).toMatchObject({ balance: 2_000 });
    });
  });
});
