// A sandbox fault window as the chaos run drives it: the stack remembers the faults last
// set on a service and gives them to its next process after a kill, so a window must end
// by switching its faults off, also when it never started because the service was down.
import { describe, expect, it } from 'vitest';
import type { SandboxFaultWindow } from '../../chaos/plan.js';
import type { FaultTally } from '../../chaos/report.js';
import { driveWindow } from '../../chaos/run.js';
import { NO_SANDBOX_FAULTS } from '../../chaos/stack.js';

const window: SandboxFaultWindow = {
  kind: 'sandbox',
  service: 'bank',
  fault: 'crash',
  atMs: 0,
  untilMs: 700,
  faults: { crashAfterCommit: 1 },
};

function tally(): FaultTally {
  return {
    dropWindows: 0,
    failWindows: 0,
    delayWindows: 0,
    downWindows: 0,
    crashWindows: 0,
    processes: {},
    inFlightAtKill: {},
    downMs: {},
    readyzWhileTemporalDown: {},
  };
}

/** Records every PUT of faults; refuses them while `down` says so, as a killed sandbox does. */
function sandbox(down: () => boolean) {
  const calls: Record<string, unknown>[] = [];
  return {
    calls,
    async setFaults(_service: string, faults: Record<string, unknown>) {
      calls.push(faults);
      if (down()) throw new TypeError('fetch failed');
    },
  };
}

describe('a sandbox fault window', () => {
  it('is switched on, counted, and switched off at its end', async () => {
    const stack = sandbox(() => false);
    const counted = tally();
    const lines: string[] = [];
    await driveWindow(
      stack,
      window,
      Date.now(),
      counted,
      () => true,
      (l) => lines.push(l),
    );
    expect(stack.calls).toEqual([window.faults, NO_SANDBOX_FAULTS]);
    expect(counted.crashWindows).toBe(1);
    expect(lines.join('\n')).toContain('fault on: bank crash');
  });

  it('that never started because its service stayed down still ends with its faults off', async () => {
    const stack = sandbox(() => true);
    const counted = tally();
    const lines: string[] = [];
    await driveWindow(
      stack,
      window,
      Date.now(),
      counted,
      () => true,
      (l) => lines.push(l),
    );
    expect(stack.calls.slice(0, -1).every((c) => c === window.faults)).toBe(true);
    expect(stack.calls.length).toBeGreaterThan(1);
    // The last word is "off": a process that comes back later inherits nothing from it.
    expect(stack.calls.at(-1)).toEqual(NO_SANDBOX_FAULTS);
    expect(counted.crashWindows).toBe(0);
    expect(lines.join('\n')).toContain('fault window on bank could not be applied');
  });

  it('is not started at all once the fault phase is over', async () => {
    const stack = sandbox(() => false);
    const counted = tally();
    await driveWindow(
      stack,
      window,
      Date.now(),
      counted,
      () => false,
      () => undefined,
    );
    expect(stack.calls).toEqual([]);
    expect(counted.crashWindows).toBe(0);
  });
});
