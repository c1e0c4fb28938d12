// Each sandbox's real entry point as a process: seeding once, its ledger and keys kept
// across a restart, a clean stop on SIGTERM and SIGINT, fault routes only when asked for,
// and a refused configuration naming every bad variable.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { caller, sandboxKey, startSandboxProcess, stopSandboxProcess } from '../support/sandbox-harness.js';
import { effect, SANDBOXES } from './kinds.js';

const dir = mkdtempSync(join(tmpdir(), 'retrysafe-sandbox-server-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe.each(SANDBOXES)('$entry', (kind) => {
  const start = (env: Record<string, string> = {}) =>
    startSandboxProcess(kind.name, kind.entry, {
      [`${kind.prefix}_PORT`]: '0',
      [`${kind.prefix}_DB`]: join(dir, `${kind.name}.db`),
      ...env,
    });
  const read = async (url: string) => (await fetch(url + kind.seededRead.path)).json();
  /** The effect under `key` is there once, and its retry is a replay that changes nothing. */
  const expectReplayedOnce = async (url: string, key: string) => {
    expect(await read(url)).toEqual(kind.seededRead.afterOneEffect);
    const replay = await effect(kind, caller(url), key);
    expect(replay.status).toBe(201);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(await read(url)).toEqual(kind.seededRead.afterOneEffect);
  };

  it.each(['SIGTERM', 'SIGINT'] as const)(
    'seeds once, keeps its ledger and keys across a restart, and stops cleanly on %s',
    { timeout: 180_000 },
    async (signal) => {
      const db = join(dir, `${kind.name}-${signal}.db`);
      const first = await start({ [`${kind.prefix}_DB`]: db });
      const key = sandboxKey('server');
      expect(await read(first.url)).toEqual(kind.seededRead.before);
      expect((await effect(kind, caller(first.url), key)).status).toBe(201);
      expect(first.output()).toMatch(new RegExp(`"msg":"${kind.name} listening at http://127\\.0\\.0\\.1:\\d+"`));
      expect(await stopSandboxProcess(first, signal)).toBe(0);
      expect(first.output()).toContain(`${kind.name} stopping`);

      const second = await start({ [`${kind.prefix}_DB`]: db });
      try {
        // Not re-seeded: the effect is still there.
        await expectReplayedOnce(second.url, key);
        expect((await fetch(`${second.url}/_faults`)).status).toBe(404);
      } finally {
        expect(await stopSandboxProcess(second)).toBe(0);
      }
    },
  );

  it('with SANDBOX_FAULTS=1, serves /_faults and says so in its log', { timeout: 90_000 }, async () => {
    const running = await start({ SANDBOX_FAULTS: '1', [`${kind.prefix}_DB`]: join(dir, `${kind.name}-faults.db`) });
    try {
      expect((await fetch(`${running.url}/_faults`)).status).toBe(200);
      expect(running.output()).toContain('fault injection enabled');
    } finally {
      expect(await stopSandboxProcess(running)).toBe(0);
    }
  });

  it(
    'with crashAfterCommit, dies by SIGKILL the moment an effect commits; after a restart the retry replays it, done once',
    { timeout: 180_000 },
    async () => {
      const db = join(dir, `${kind.name}-crash.db`);
      const first = await start({ SANDBOX_FAULTS: '1', [`${kind.prefix}_DB`]: db });
      const exited = new Promise<void>((done) => first.child.once('close', () => done()));
      const put = await fetch(`${first.url}/_faults`, {
        method: 'PUT',
        body: JSON.stringify({ crashAfterCommit: 1 }),
        headers: { 'content-type': 'application/json' },
      });
      expect(put.status).toBe(200);
      const key = sandboxKey('crash');
      await expect(effect(kind, caller(first.url), key)).rejects.toThrow();
      await exited;
      expect(first.output()).toContain('fault: committed, crashing now (SIGKILL)');
      expect(first.output()).not.toContain(`${kind.name} stopping`);

      const second = await start({ SANDBOX_FAULTS: '1', [`${kind.prefix}_DB`]: db });
      try {
        // A new process starts with no faults; the effect committed before the crash is there once.
        await expectReplayedOnce(second.url, key);
      } finally {
        expect(await stopSandboxProcess(second)).toBe(0);
      }
    },
  );

  it('refuses bad configuration with one line per variable and exit code 1', { timeout: 90_000 }, async () => {
    const failure = await start({ [`${kind.prefix}_PORT`]: 'abc', KEY_TTL: 'soon' }).then(
      () => expect.fail('started with a bad configuration'),
      (err: { exitCode: number; output: string }) => err,
    );
    expect(failure.exitCode).toBe(1);
    expect(failure.output).toContain(`${kind.prefix}_PORT="abc"`);
    expect(failure.output).toContain('KEY_TTL="soon"');
  });
});
