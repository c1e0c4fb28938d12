// The supervisor's decisions on small throwaway processes (`node -e`): a part that dies is
// restarted with a back-off that doubles up to its cap; a part that cannot start gives up
// after the policy's attempts, saying why; a stop calls a pending restart off; parts stop
// in reverse order of registration.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import type { PartEvent, PartSpec, RestartPolicy } from '../../tools/supervisor/part.js';
import { FREE_PORT_RANGE, freePort, probePort } from '../../tools/supervisor/ports.js';
import { lineProbe, StartError } from '../../tools/supervisor/ready.js';
import { Supervisor } from '../../tools/supervisor/supervisor.js';

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

describe('a part that is any executable', () => {
  it('is stopped with its own stop signal, and killed only when it ignores it past the grace period', async () => {
    const supervisor = new Supervisor();
    // Like PostgreSQL: SIGINT is its clean stop, SIGTERM would not end it.
    const part = supervisor.add(
      script('pg-like', `process.on('SIGTERM', () => undefined); process.on('SIGINT', () => process.exit(0)); ${STAYS_UP}`, {
        ready: lineProbe('ready'),
        stopSignal: 'SIGINT',
        stopGraceMs: 20_000,
      }),
    );
    await part.start();
    const { exit } = await part.stop();
    expect(exit).toEqual({ code: 0, signal: undefined });

    const stubborn = supervisor.add(
      script('stubborn', `process.on('SIGINT', () => undefined); ${STAYS_UP}`, {
        ready: lineProbe('ready'),
        stopSignal: 'SIGINT',
        stopGraceMs: 300,
      }),
    );
    await stubborn.start();
    expect((await stubborn.stop()).exit).toEqual({ code: undefined, signal: 'SIGKILL' });
  });

  it.runIf(process.getuid?.() === 0)('runs as the user and group it names', async () => {
    const part = new Supervisor().add({
      name: 'as-nobody',
      command: { bin: '/bin/sh', args: ['-c', 'echo "ids $(id -u) $(id -g)"; exec sleep 60'] },
      uid: 65534,
      gid: 65534,
      ready: lineProbe('ids'),
      stopGraceMs: 2_000,
    });
    await part.start();
    expect(part.output).toContain('ids 65534 65534');
    await part.stop();
  });

  it.runIf(process.platform === 'linux')(
    'gets its orphan signal when the process that supervises it is killed outright',
    async () => {
      // A supervisor in a child Node process starts `sleep`; SIGKILL of that process runs no
      // exit hook, so only the kernel's parent-death signal can stop the sleep.
      const supervisorModule = new URL('../../tools/supervisor/supervisor.js', import.meta.url).href;
      const code = `
        const { Supervisor } = await import(${JSON.stringify(supervisorModule)});
        const part = new Supervisor().add({ name: 'sleeper', command: { bin: 'sleep', args: ['600'], orphanSignal: 'SIGTERM' } });
        await part.start();
        console.log('pid ' + part.pid);
        setInterval(() => undefined, 1_000);`;
      const parent = new Supervisor().add({
        name: 'parent',
        command: { bin: process.execPath, args: ['--import', 'tsx', '--input-type=module', '-e', code] },
        ready: lineProbe('pid '),
        stopGraceMs: 2_000,
      });
      await parent.start();
      const sleeper = Number(/pid (\d+)/.exec(parent.output.join('\n'))![1]);
      expect(isRunning(sleeper)).toBe(true);
      // SIGKILL of the parent alone (not its group): the sleep is in a group of its own anyway.
      process.kill(parent.pid!, 'SIGKILL');
      await parent.exited;
      const deadline = Date.now() + 10_000;
      while (isRunning(sleeper) && Date.now() < deadline) await sleep(100);
      expect(isRunning(sleeper)).toBe(false);
    },
  );

  it.each([
    [
      'a Go server logging JSON with a level name, whose port is taken',
      `{"level":"error","ts":"2026-01-01T00:00:00Z","msg":"Unable to start server","error":"listen tcp 127.0.0.1:7239: bind: address already in use"}`,
      'port 7239 is already in use (exited with code 1)',
    ],
    [
      'a Go server logging a fatal JSON line',
      `{"level":"fatal","msg":"Unable to create persistence","error":"dial tcp 127.0.0.1:7235: connect: connection refused"}`,
      'exited with code 1 before it was ready: Unable to create persistence: dial tcp 127.0.0.1:7235: connect: connection refused',
    ],
    [
      'PostgreSQL',
      `2026-01-01 00:00:00.000 UTC [42] FATAL:  data directory "/pg" has invalid permissions`,
      'exited with code 1 before it was ready: data directory "/pg" has invalid permissions',
    ],
  ])('says why %s did not start', async (_what, line, message) => {
    const part = new Supervisor().add(
      script('server', `console.error(${JSON.stringify(line)}); console.log('{"level":"info","msg":"bye"}'); process.exit(1);`, {
        // Not 'ready': "already in use" contains it.
        ready: lineProbe('serving'),
      }),
    );
    await expect(part.start()).rejects.toMatchObject({ message });
  });
});

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('free ports for a throwaway stack', () => {
  it('are listenable, never handed out twice, and outside the range the kernel gives outgoing connections', async () => {
    const ports = await Promise.all(Array.from({ length: 40 }, () => freePort()));
    expect(new Set(ports).size).toBe(ports.length);
    for (const port of ports) {
      expect(port).toBeGreaterThanOrEqual(FREE_PORT_RANGE.from);
      expect(port).toBeLessThanOrEqual(FREE_PORT_RANGE.to);
      expect(await probePort('127.0.0.1', port)).toBeUndefined();
    }
  });
});
