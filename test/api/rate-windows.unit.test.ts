// The shared rate windows on a real SQLite file: counts per tenant and window, the reset,
// and two handles on one file (two API instances) spending one quota.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { RateWindows } from '../../client/api/admission/rate-windows.js';
import type { Rate } from '../../client/api/admission/tenant-limits.js';

const dirs: string[] = [];
const opened: RateWindows[] = [];

/** A fresh file, in a folder that does not exist yet. */
function newFile(): string {
  const dir = mkdtempSync(join(tmpdir(), 'rate-windows-'));
  dirs.push(dir);
  return join(dir, 'nested', 'limits.db');
}

function open(file = newFile()): RateWindows {
  const windows = new RateWindows(file);
  opened.push(windows);
  return windows;
}

afterEach(() => {
  for (const w of opened.splice(0)) w.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const perSecond = (quota: number): Rate => ({ quota, windowSeconds: 1, spec: `${quota}/s` });
const perMinute = (quota: number): Rate => ({ quota, windowSeconds: 60, spec: `${quota}/m` });
/** 10:00:00.000 UTC on some day: the start of every window. */
const T0 = Date.UTC(2030, 0, 1, 10, 0, 0);

describe('rate windows', () => {
  it('admits the quota of a window, then refuses until the next window', () => {
    const windows = open();
    const rate = perSecond(3);
    const decisions = [0, 100, 200, 300, 999].map((dt) => windows.take('acme', rate, T0 + dt));
    expect(decisions.map((d) => d.allowed)).toEqual([true, true, true, false, false]);
    expect(decisions.map((d) => d.remaining)).toEqual([2, 1, 0, 0, 0]);
    expect(decisions.every((d) => d.resetSeconds === 1)).toBe(true);
    expect(windows.take('acme', rate, T0 + 1000)).toEqual({ allowed: true, remaining: 2, resetSeconds: 1 });
  });

  it('says how many whole seconds are left of a minute window, rounded up', () => {
    const windows = open();
    expect(windows.take('acme', perMinute(10), T0 + 15_200).resetSeconds).toBe(45);
    expect(windows.take('acme', perMinute(10), T0 + 59_999).resetSeconds).toBe(1);
    expect(windows.take('acme', perMinute(10), T0 + 60_000).resetSeconds).toBe(60);
  });

  it('keeps each tenant to its own count', () => {
    const windows = open();
    expect(windows.take('acme', perSecond(1), T0).allowed).toBe(true);
    expect(windows.take('acme', perSecond(1), T0).allowed).toBe(false);
    expect(windows.take('beta', perSecond(1), T0).allowed).toBe(true);
  });

  it('stops counting one past the quota, so a flood does not push the count up forever', () => {
    const windows = open();
    for (let i = 0; i < 1000; i++) windows.take('acme', perSecond(5), T0);
    expect(windows.take('acme', perSecond(5), T0)).toEqual({ allowed: false, remaining: 0, resetSeconds: 1 });
    expect(windows.take('acme', perSecond(5), T0 + 1000).remaining).toBe(4);
  });

  it('shares one quota between two handles on one file, as two API instances do', () => {
    const file = newFile();
    const [first, second] = [open(file), open(file)];
    const rate = perMinute(4);
    const taken = [first, second, first, second, first, second].map((w, i) => w.take('acme', rate, T0 + i).allowed);
    expect(taken).toEqual([true, true, true, true, false, false]);
  });

  it('keeps counts across a reopen of the file (an instance restarting)', () => {
    const file = newFile();
    const first = open(file);
    first.take('acme', perMinute(2), T0);
    first.take('acme', perMinute(2), T0);
    const reopened = open(file);
    expect(reopened.take('acme', perMinute(2), T0 + 10).allowed).toBe(false);
  });
});
