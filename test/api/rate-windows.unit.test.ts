// The shared rate windows on a real SQLite file, counted in the store's worker thread: counts
// per tenant and window, two handles on one file (two API instances) spending one quota, a
// unit given back; and what stands between a request and the store: a file locked by
// another connection, then corrupted, never holds the event loop or a request past the
// deadline, the instance counts on its own meanwhile and says so once, and the shared count
// comes back when the file does.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { RateWindows, MAX_PENDING, type WindowsState } from '../../client/api/admission/rate-windows.js';
import { SqliteWindows } from '../../client/api/admission/sqlite-windows.js';
import type { Rate } from '../../client/api/admission/tenant-limits.js';
import type { WindowDecision, WindowStore } from '../../client/api/admission/window-store.js';

const dirs: string[] = [];
const opened: { close(): Promise<void> }[] = [];
const perHour = (quota: number): Rate => ({ quota, windowSeconds: 3600, spec: `${quota}/h` });

function newFile(): string {
  const dir = mkdtempSync(join(tmpdir(), 'rate-windows-'));
  dirs.push(dir);
  return join(dir, 'nested', 'limits.db');
}

/** A logger whose lines the test reads. */
function recordingLogger() {
  const lines: { level: number; msg: string }[] = [];
  const logger = pino({ level: 'debug' }, { write: (line: string) => void lines.push(JSON.parse(line)) });
  return { logger, lines, warnings: () => lines.filter((l) => l.level === 40).map((l) => l.msg) };
}

function guarded(store: WindowStore, timeoutMs = 200) {
  const { logger, lines, warnings } = recordingLogger();
  const states: WindowsState[] = [];
  const windows = new RateWindows(store, { timeoutMs, logger, onState: (s) => states.push(s) });
  opened.push(windows);
  return { windows, lines, warnings, states };
}

function sqlite(file = newFile(), busyMs = 200): SqliteWindows {
  const store = new SqliteWindows(file, busyMs);
  opened.push(store);
  return store;
}

/** Resolves after the event loop has turned `n` times: proof that nothing blocked it meanwhile. */
async function loopTurns(ms: number): Promise<number> {
  let turns = 0;
  const end = performance.now() + ms;
  while (performance.now() < end) {
    await new Promise((r) => setImmediate(r));
    turns++;
  }
  return turns;
}

afterEach(async () => {
  for (const w of opened.splice(0)) await w.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe('the SQLite store', () => {
  it('counts each tenant against its quota in its window, and says when the window ends', async () => {
    const store = sqlite();
    const rate = perHour(2);
    const [a, b, c] = [await store.take('acme', rate), await store.take('acme', rate), await store.take('acme', rate)];
    expect([a.allowed, b.allowed, c.allowed]).toEqual([true, true, false]);
    expect([a.remaining, b.remaining, c.remaining]).toEqual([1, 0, 0]);
    expect(c.resetMs).toBeGreaterThan(3_590_000);
    expect(c.resetMs).toBeLessThanOrEqual(3_600_000);
    // Another tenant, and another rate of the same tenant, are windows of their own.
    expect((await store.take('beta', rate)).allowed).toBe(true);
    expect((await store.take('acme', perHour(5))).allowed).toBe(true);
  });

  it('is one quota for two handles on one file (two API instances)', async () => {
    const file = newFile();
    const [first, second] = [sqlite(file), sqlite(file)];
    const rate = perHour(3);
    const answers = await Promise.all(Array.from({ length: 10 }, (_, i) => (i % 2 ? first : second).take('acme', rate)));
    expect(answers.filter((d) => d.allowed)).toHaveLength(3);
  });

  it('takes a unit given back again', async () => {
    const store = sqlite();
    const rate = perHour(2);
    expect((await store.take('acme', rate)).remaining).toBe(1);
    await store.give('acme', rate);
    expect((await store.take('acme', rate)).remaining).toBe(1);
    expect((await store.take('acme', rate)).remaining).toBe(0);
    expect((await store.take('acme', rate)).allowed).toBe(false);
  });

  it('fails a call, rather than waiting, on a file that is not a database; and opens it again once it is repaired', async () => {
    const file = newFile();
    const store = sqlite(file);
    await store.check();
    await store.close();
    writeFileSync(file, 'this is not a database '.repeat(400));
    rmSync(`${file}-wal`, { force: true });
    rmSync(`${file}-shm`, { force: true });
    const reopened = sqlite(file);
    await expect(reopened.take('acme', perHour(1))).rejects.toThrow(/not a database|malformed/);
    rmSync(file);
    expect((await reopened.take('acme', perHour(1))).allowed).toBe(true);
  });
});

describe('a request in front of the store', () => {
  it('is refused without a store call once this instance saw its window spent', async () => {
    let calls = 0;
    const store = sqlite();
    const counting: WindowStore = {
      ...store,
      name: store.name,
      take: (t, r) => (calls++, store.take(t, r)),
      give: (t, r) => store.give(t, r),
      check: () => store.check(),
      close: () => store.close(),
    };
    const { windows } = guarded(counting);
    // As at start-up: the worker started and the file opened, however slow the machine.
    await windows.check();
    const rate = perHour(2);
    const answers: WindowDecision[] = [];
    for (let i = 0; i < 6; i++) answers.push(await windows.take('acme', rate));
    expect(answers.map((d) => d.allowed)).toEqual([true, true, false, false, false, false]);
    // The second answer left nothing: from then on the window is known spent here.
    expect(calls).toBe(2);
    // A unit given back opens it again.
    await windows.give('acme', rate);
    expect((await windows.take('acme', rate)).allowed).toBe(true);
  });

  it('while another connection holds the file: answered within the deadline, the event loop free, counted here, logged once; shared again after', async () => {
    const file = newFile();
    const store = sqlite(file, 2_000);
    const { windows, warnings, lines, states } = guarded(store, 150);
    // As at start-up: the worker started and the file opened, however slow the machine.
    await windows.check();
    const rate = perHour(3);
    expect((await windows.take('acme', rate)).allowed).toBe(true);

    const locker = new Database(file);
    locker.exec('BEGIN EXCLUSIVE');
    let held: WindowDecision[];
    try {
      const started = performance.now();
      const taking = Promise.all(Array.from({ length: 5 }, () => windows.take('acme', rate)));
      // The event loop keeps turning while the worker waits on the lock.
      expect(await loopTurns(100)).toBeGreaterThan(50);
      held = await taking;
      expect(performance.now() - started).toBeLessThan(1_000);
      expect(windows.inForce).toBe('instance');
    } finally {
      locker.exec('ROLLBACK');
      locker.close();
    }
    // Counted here on their own: three a window, whatever the store had counted.
    expect(held.filter((d) => d.allowed)).toHaveLength(3);
    expect(warnings()).toEqual([
      "rate windows: SQLite cannot answer; until it does, this instance counts each tenant's quota on its own",
    ]);
    // The store is tried again after its back-off, and the shared count is back.
    await new Promise((r) => setTimeout(r, 1_100));
    expect((await windows.take('beta', rate)).allowed).toBe(true);
    expect(windows.inForce).toBe('shared');
    expect(states).toEqual(['instance', 'shared']);
    expect(lines.filter((l) => l.msg.includes('answers again'))).toHaveLength(1);
  });

  it('does not queue behind a store that does not answer: past MAX_PENDING calls it counts here at once', async () => {
    const never: WindowStore = {
      name: 'a store that never answers',
      take: () => new Promise<WindowDecision>(() => undefined),
      give: () => new Promise<void>(() => undefined),
      check: async () => undefined,
      close: async () => undefined,
    };
    const { windows } = guarded(never, 5_000);
    const rate = perHour(1_000);
    const waiting = Array.from({ length: MAX_PENDING }, () => windows.take('acme', rate));
    const started = performance.now();
    const next = await windows.take('acme', rate);
    expect(next.allowed).toBe(true);
    expect(performance.now() - started).toBeLessThan(50);
    void waiting;
  });

  it('starts on a corrupt file: the check logs the fallback, and requests are counted here', async () => {
    const file = newFile();
    const first = sqlite(file);
    await first.check();
    await first.close();
    writeFileSync(file, Buffer.alloc(8192, 7));
    rmSync(`${file}-wal`, { force: true });
    const { windows, warnings } = guarded(sqlite(file));
    await windows.check();
    expect(windows.inForce).toBe('instance');
    expect(warnings()).toHaveLength(1);
    const rate = perHour(1);
    expect((await windows.take('acme', rate)).allowed).toBe(true);
    expect((await windows.take('acme', rate)).allowed).toBe(false);
  });
});
