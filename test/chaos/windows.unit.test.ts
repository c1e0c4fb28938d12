// A sandbox fault window as the chaos run drives it. The stack remembers the faults last
// set on a service and gives them to its next process after a kill, so a window must end
// by switching its own faults off, also when it never started. A crash window is one
// event: it waits for its service to be up and stays armed until the service has crashed.
import { describe, expect, it } from 'vitest';
import { setTimeout as sleep } from 'node:timers/promises';
import { driveWindow } from '../../tools/chaos/drivers.js';
import type { SandboxFaultWindow } from '../../tools/chaos/fault-schedule.js';
import { newLogCounts } from '../../tools/chaos/log-taps.js';
import { newFaultTally } from '../../tools/chaos/report.js';

const drop: SandboxFaultWindow = {
  kind: 'sandbox',
  service: 'bank',
  fault: 'drop',
  atMs: 0,
  untilMs: 700,
  faults: { dropResponseAfterCommit: 0.5 },
};
const crash: SandboxFaultWindow = { ...drop, fault: 'crash', faults: { crashAfterCommit: 1 } };

/**
 * Records every PUT of faults, with the time since the start; refuses them while `down`
 * says so, as a sandbox being restarted does. `crashes` is what the stack's log tap counts.
 */
function sandbox(down: () => boolean) {
  const started = Date.now();
  const calls: { atMs: number; faults: Record<string, unknown> }[] = [];
  const counts = newLogCounts();
  return {
    calls,
    counts,
    sent: () => calls.map((c) => c.faults),
    async setFaults(_service: string, faults: Record<string, unknown>) {
      calls.push({ atMs: Date.now() - started, faults });
      if (down()) throw new TypeError('fetch failed');
    },
  };
}

async function drive(stack: ReturnType<typeof sandbox>, w: SandboxFaultWindow, faultsOn: () => boolean = () => true) {
  const counted = newFaultTally();
  const lines: string[] = [];
  await driveWindow(stack, w, Date.now(), counted, faultsOn, (l) => lines.push(l));
  return { counted, log: lines.join('\n') };
}

describe('a sandbox fault window', () => {
  it('is switched on, counted, and at its end switches off its own faults only', async () => {
    const stack = sandbox(() => false);
    const { counted, log } = await drive(stack, drop);
    expect(stack.sent()).toEqual([drop.faults, { dropResponseAfterCommit: 0 }]);
    expect(stack.calls[1]!.atMs).toBeGreaterThanOrEqual(650);
    expect(counted.dropWindows).toBe(1);
    expect(log).toContain('fault on: bank drop');
  });

  it('that never started because its service stayed down still ends with its faults off', async () => {
    const stack = sandbox(() => true);
    const { counted, log } = await drive(stack, drop);
    expect(stack.sent().length).toBeGreaterThan(2);
    expect(
      stack
        .sent()
        .slice(0, -1)
        .every((f) => f === drop.faults),
    ).toBe(true);
    // The last word is "off": a process that comes back later inherits nothing from it.
    expect(stack.sent().at(-1)).toEqual({ dropResponseAfterCommit: 0 });
    expect(counted.dropWindows).toBe(0);
    expect(log).toContain('fault window on bank could not be applied');
  });

  it('is not started at all once the fault phase is over', async () => {
    const stack = sandbox(() => false);
    const { counted } = await drive(stack, crash, () => false);
    expect(stack.sent()).toEqual([]);
    expect(counted.crashWindows).toBe(0);
  });

  it('for a crash, waits past its planned end for its service to come back, and ends once it crashed', async () => {
    const started = Date.now();
    const stack = sandbox(() => Date.now() - started < 1_200);
    // The service crashes at its first commit, 300 ms after the faults reached it.
    void (async () => {
      while (!stack.calls.some((c) => c.atMs >= 1_200)) await sleep(20);
      await sleep(300);
      stack.counts.crashedAfterCommit.bank++;
    })();
    const { counted, log } = await drive(stack, crash);
    const applied = stack.calls.find((c) => c.atMs >= 1_200)!;
    expect(applied.faults).toEqual(crash.faults);
    expect(counted.crashWindows).toBe(1);
    expect(log).not.toContain('could not be applied');
    const last = stack.calls.at(-1)!;
    expect(last.faults).toEqual({ crashAfterCommit: 0 });
    expect(last.atMs - applied.atMs).toBeGreaterThanOrEqual(250);
  });

  it('for a crash that has not happened by its planned end, stays armed until the faults stop', async () => {
    const stack = sandbox(() => false);
    let on = true;
    setTimeout(() => (on = false), 1_500);
    const { counted, log } = await drive(stack, crash, () => on);
    expect(counted.crashWindows).toBe(1);
    expect(log).toContain('stays armed');
    expect(stack.sent()).toEqual([crash.faults, { crashAfterCommit: 0 }]);
    expect(stack.calls[1]!.atMs).toBeGreaterThanOrEqual(1_450);
  });
});
