// The supervisor's decisions on small throwaway processes (`node -e`): a part that dies is
// restarted with a back-off that doubles up to its cap; a part that cannot start gives up
// after the policy's attempts, saying why; a stop calls a pending restart off; parts stop
// in reverse order of registration.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { PartEvent, PartSpec, RestartPolicy } from '../../common/supervisor/part.js';
import { lineProbe, StartError } from '../../common/supervisor/ready.js';
import { Supervisor } from '../../common/supervisor/supervisor.js';

const POLICY: RestartPolicy = { maxFailedStarts: 3, initialDelayMs: 50, maxDelayMs: 200, stableAfterMs: 60_000 };

/** A Node one-liner as a part: `script` runs with `process` and `fs` at hand. */
function script(name: string, code: string, extra: Partial<PartSpec> = {}): PartSpec {
  return {
    name,
    command: { bin: process.execPath, args: ['-e', `const fs = require('node:fs'); ${code}`] },
    stopGraceMs: 2_000,
    ...extra,
  };
}

/** Prints "ready" and then stays up until it is stopped. */
const STAYS_UP = `console.log('ready'); setInterval(() => undefined, 1_000);`;

function recorder() {
  const events: PartEvent[] = [];
  const waiters: Array<{ test: (e: PartEvent) => boolean; resolve: () => void }> = [];
  return {
    events,
    onEvent(event: PartEvent) {
      events.push(event);
      for (const w of waiters.filter((w) => w.test(event))) w.resolve();
    },
    /** Resolves once `count` events of `type` were seen. */
    seen(type: PartEvent['type'], count = 1) {
      const test = () => events.filter((e) => e.type === type).length >= count;
      return new Promise<void>((resolve) => (test() ? resolve() : waiters.push({ test, resolve })));
    },
  };
}

describe('the supervisor', () => {
  it('restarts a part that keeps dying, the delay doubling up to its cap, until it is stopped', async () => {
    const log = recorder();
    const supervisor = new Supervisor((e) => log.onEvent(e));
    // Up (its line printed), then dead a moment later, every time.
    const part = supervisor.add(
      script('flaky', `console.log('ready'); setTimeout(() => process.exit(7), 20);`, {
        ready: lineProbe('ready'),
        restart: POLICY,
      }),
    );
    await part.start();
    await log.seen('restarted', 4);
    await supervisor.stopAll();
    const crashes = log.events.filter((e) => e.type === 'crashed');
    expect(crashes.slice(0, 4).map((e) => e.restartInMs)).toEqual([50, 100, 200, 200]);
    expect(crashes[0]).toMatchObject({ part: { name: 'flaky' }, exit: { code: 7, signal: undefined } });
    expect(part.unexpectedExits).toBeGreaterThanOrEqual(4);
    expect(part.running).toBe(false);
  });

  it("gives up a start after the policy's attempts, saying why and how often, with each retry reported", async () => {
    const log = recorder();
    const part = new Supervisor((e) => log.onEvent(e)).add(
      script('broken', `console.error('Error: cannot open its database'); process.exit(3);`, {
        ready: lineProbe('ready'),
        restart: POLICY,
      }),
    );
    const error = await part.start().then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(error).toBeInstanceOf(StartError);
    expect(error).toMatchObject({
      part: 'broken',
      attempts: 3,
      message: 'exited with code 3 before it was ready: Error: cannot open its database',
    });
    expect(log.events.map((e) => (e.type === 'retrying' ? [e.failures, e.retryInMs] : e.type))).toEqual([
      [1, 50],
      [2, 100],
    ]);
    expect(part.spawns).toBe(3);
  });

  it('without a policy, fails a start at once and only reports a later exit', async () => {
    const log = recorder();
    const supervisor = new Supervisor((e) => log.onEvent(e));
    const broken = supervisor.add(script('once', `process.exit(2);`, { ready: lineProbe('ready') }));
    await expect(broken.start()).rejects.toMatchObject({ attempts: 1, message: 'exited with code 2 before it was ready' });
    expect(broken.spawns).toBe(1);

    const mortal = supervisor.add(script('mortal', STAYS_UP, { ready: lineProbe('ready') }));
    await mortal.start();
    process.kill(mortal.pid!, 'SIGKILL');
    await log.seen('crashed');
    expect(log.events).toEqual([
      expect.objectContaining({ type: 'crashed', restartInMs: undefined, exit: { code: undefined, signal: 'SIGKILL' } }),
    ]);
    expect(mortal.spawns).toBe(1);
  });

  it('when a part that crashed cannot start again, gives up and names it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'retrysafe-supervisor-'));
    const marker = join(dir, 'started');
    const log = recorder();
    const supervisor = new Supervisor((e) => log.onEvent(e));
    // Starts once; every later start finds the marker and fails.
    const part = supervisor.add(
      script(
        'once-only',
        `if (fs.existsSync(${JSON.stringify(marker)})) process.exit(1); fs.writeFileSync(${JSON.stringify(marker)}, ''); ${STAYS_UP}`,
        {
          ready: lineProbe('ready'),
          restart: POLICY,
        },
      ),
    );
    await part.start();
    process.kill(part.pid!, 'SIGKILL');
    const { part: gaveUp, error } = await supervisor.gaveUp;
    expect(gaveUp).toBe(part);
    expect(error).toMatchObject({ part: 'once-only', attempts: 3, message: 'exited with code 1 before it was ready' });
    expect(log.events.map((e) => e.type)).toEqual(['crashed', 'retrying', 'retrying', 'gave-up']);
    expect(part.running).toBe(false);
    rmSync(dir, { recursive: true, force: true });
  });

  it('calls a pending restart off when the part is stopped during its back-off', async () => {
    const log = recorder();
    const supervisor = new Supervisor((e) => log.onEvent(e));
    const part = supervisor.add(
      script('stopped', STAYS_UP, {
        ready: lineProbe('ready'),
        restart: { ...POLICY, initialDelayMs: 60_000, maxDelayMs: 60_000 },
      }),
    );
    await part.start();
    process.kill(part.pid!, 'SIGKILL');
    await log.seen('crashed');
    const { exit } = await part.stop();
    expect(exit).toBeUndefined(); // nothing was running to stop
    await part.start(); // a later start is a new start, not the called-off restart
    expect(part.spawns).toBe(2);
    await part.stop();
    expect(log.events.map((e) => e.type)).toEqual(['crashed']);
  });

  it('stops the parts in reverse order of registration, each after a SIGTERM', async () => {
    const supervisor = new Supervisor();
    const names = ['first', 'second', 'third'];
    for (const name of names) {
      await supervisor
        .add(script(name, `process.on('SIGTERM', () => process.exit(0)); ${STAYS_UP}`, { ready: lineProbe('ready') }))
        .start();
    }
    const stopped: Array<[string, number | undefined, string | undefined]> = [];
    await supervisor.stopAll((part, { exit }) => stopped.push([part.name, exit?.code, exit?.signal]));
    expect(stopped).toEqual([
      ['third', 0, undefined],
      ['second', 0, undefined],
      ['first', 0, undefined],
    ]);
  });
});
