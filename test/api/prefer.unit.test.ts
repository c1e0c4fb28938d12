import { describe, expect, it } from 'vitest';
import { parsePrefer } from '../../client/api/prefer.js';

const DEFAULT = 10_000;
const ok = (header: string | string[] | undefined) => {
  const r = parsePrefer(header, DEFAULT);
  if (!r.ok) throw new Error(`expected ok, got ${r.message}`);
  return r.value;
};

describe('Prefer parsing (RFC 7240)', () => {
  it('waits the default when there is no Prefer header, and applies nothing', () => {
    expect(ok(undefined)).toEqual({ waitMs: DEFAULT, applied: undefined });
    expect(ok('')).toEqual({ waitMs: DEFAULT, applied: undefined });
  });

  it('honours wait=N in seconds', () => {
    expect(ok('wait=5')).toEqual({ waitMs: 5000, applied: 'wait=5' });
    expect(ok('wait=0')).toEqual({ waitMs: 0, applied: 'wait=0' });
    expect(ok('wait=60')).toEqual({ waitMs: 60_000, applied: 'wait=60' });
  });

  it('treats respond-async alone as wait 0', () => {
    expect(ok('respond-async')).toEqual({ waitMs: 0, applied: 'respond-async' });
  });

  it('with respond-async and wait, waits that long (answer async if it takes longer)', () => {
    expect(ok('respond-async, wait=10')).toEqual({ waitMs: 10_000, applied: 'respond-async, wait=10' });
  });

  it('matches preference names case-insensitively and accepts a quoted value', () => {
    expect(ok('WAIT=3').waitMs).toBe(3000);
    expect(ok('wait="7"').waitMs).toBe(7000);
    expect(ok('Respond-Async').waitMs).toBe(0);
  });

  it('ignores unknown preferences and parameters', () => {
    expect(ok('handling=lenient, wait=2').waitMs).toBe(2000);
    expect(ok('wait=2; foo=bar').waitMs).toBe(2000);
    expect(ok('return=minimal')).toEqual({ waitMs: DEFAULT, applied: undefined });
  });

  it('considers only the first of a repeated preference', () => {
    expect(ok('wait=2, wait=30').waitMs).toBe(2000);
  });

  it('reads several Prefer headers as one list', () => {
    expect(ok(['respond-async', 'wait=4'])).toEqual({ waitMs: 4000, applied: 'respond-async, wait=4' });
  });

  it.each(['wait=61', 'wait=-1', 'wait=1.5', 'wait=abc', 'wait', 'wait=', 'wait=1e3', 'wait=99999999999999999999'])(
    'refuses %j',
    (header) => {
      const r = parsePrefer(header, DEFAULT);
      expect(r.ok).toBe(false);
    },
  );
});
