// The in-flight limit itself, on simulated time and latency series: the max-min share rule
// (lending an idle tenant's part, taking it back on its first request), the adaptation
// (rises while operations take their unloaded time, falls while they queue), its floor and
// ceiling, and the places one instance hands out.
import { describe, expect, it } from 'vitest';
import { AdaptiveLimit, type AdaptiveLimitSettings } from '../../client/api/admission/adaptive-limit.js';
import { maxMinShares } from '../../client/api/admission/fair-shares.js';
import { BusyRetryAfter, MAX_SECONDS } from '../../client/api/admission/busy-retry-after.js';
import { InFlight, MAX_WAITERS_PER_KEY, PRESENT_MS, type Hold } from '../../client/api/admission/in-flight.js';

const shares = (limit: number, demands: Record<string, number>) =>
  Object.fromEntries(maxMinShares(limit, new Map(Object.entries(demands))));

describe('max-min fair shares', () => {
  it('divides the limit equally among tenants that all want more', () => {
    expect(shares(12, { a: Infinity, b: Infinity, c: Infinity })).toEqual({ a: 4, b: 4, c: 4 });
  });

  it('lets a tenant that needs less keep only what it uses, and divides the rest among the others', () => {
    expect(shares(12, { a: Infinity, b: Infinity, c: 2 })).toEqual({ a: 5, b: 5, c: 2 });
    expect(shares(10, { a: Infinity, b: 1, c: 3 })).toEqual({ a: 6, b: 1, c: 3 });
  });

  it('lends an idle tenant its whole part', () => {
    expect(shares(12, { a: Infinity, b: 0 })).toEqual({ a: 12, b: 0 });
  });

  it('never hands out more than the limit, nor a negative share', () => {
    const result = shares(7, { a: Infinity, b: 5, c: Infinity, d: -1 });
    expect(Object.values(result).reduce((x, y) => x + y, 0)).toBeCloseTo(7);
    expect(result.d).toBe(0);
    expect(shares(0, { a: Infinity })).toEqual({ a: 0 });
  });
});

describe('the places of one instance', () => {
  const clock = () => {
    let t = 0;
    return { now: () => t, advance: (ms: number) => (t += ms) };
  };
  const take = (bound: InFlight, tenant: string, n: number, prefix = tenant): Hold[] =>
    Array.from({ length: n }, (_, i) => bound.enter(`${tenant}/${prefix}-${i}`, tenant)).filter((h): h is Hold => !!h);

  it('gives a tenant alone the whole limit, and no more', () => {
    const bound = new InFlight(() => 8);
    expect(take(bound, 'a', 10)).toHaveLength(8);
    expect(bound.size).toBe(8);
  });

  it("lends an idle tenant's share, and takes it back on the tenant's first request", () => {
    const bound = new InFlight(() => 8);
    const a = take(bound, 'a', 8);
    expect(a).toHaveLength(8);
    // a wants more: refused, and counted as wanting.
    expect(bound.enter('a/more', 'a')).toBeUndefined();
    // b's first request: a place at once, although the limit is taken; its share is half of it.
    expect(bound.shareOf('b')).toBe(4);
    const b = [bound.enter('b/0', 'b')!];
    expect(b[0]).toBeDefined();
    // b holds one and asks for no more: a's share is the other seven, and a holds eight.
    expect(bound.shareOf('a')).toBe(7);
    a[0]!.release();
    expect(bound.enter('a/again', 'a')).toBeUndefined();
    a[1]!.release();
    expect(bound.enter('a/again', 'a')).toBeDefined();
    // b asks for more while a wants more: b may take up to its half.
    b.push(...take(bound, 'b', 5, 'next'));
    expect(b).toHaveLength(4);
    expect(bound.heldBy('b')).toBe(4);
  });

  it('gives every tenant at least one place, however small the limit', () => {
    const bound = new InFlight(() => 2);
    expect(take(bound, 'a', 5)).toHaveLength(2);
    bound.enter('a/x', 'a');
    expect(bound.enter('b/0', 'b')).toBeDefined();
    expect(bound.enter('c/0', 'c')).toBeDefined();
    expect(bound.enter('c/1', 'c')).toBeUndefined();
  });

  it('forgets that a tenant wanted more once it stops asking: its part is lent again', () => {
    const time = clock();
    const bound = new InFlight(() => 6, time.now);
    const a = take(bound, 'a', 7);
    expect(a).toHaveLength(6);
    for (const h of a.slice(0, 4)) h.release();
    // a wanted more a moment ago: b's share is half.
    expect(take(bound, 'b', 6)).toHaveLength(3);
    // a has not asked for a while and holds two: b may have the other four.
    time.advance(5_000);
    expect(bound.shareOf('b')).toBe(4);
    expect(take(bound, 'b', 2, 'later')).toHaveLength(1);
  });

  it('follows the limit as it moves', () => {
    let limit = 4;
    const bound = new InFlight(() => limit);
    expect(take(bound, 'a', 6)).toHaveLength(4);
    limit = 6;
    expect(take(bound, 'a', 6, 'more')).toHaveLength(2);
  });

  it('lets a request for an operation in flight join it, up to MAX_WAITERS_PER_KEY at once', () => {
    const bound = new InFlight(() => 1);
    const first = bound.enter('a/k', 'a')!;
    const joined: Hold[] = [];
    for (let i = 1; i < MAX_WAITERS_PER_KEY; i++) {
      const j = bound.join('a/k');
      expect(j && 'joined' in j).toBe(true);
      if (j && 'joined' in j) joined.push(j.joined);
    }
    expect(bound.join('a/k')).toEqual({ full: true });
    expect(bound.size).toBe(1);
    first.release();
    first.release();
    // The joined requests hold the operation still.
    expect(bound.enter('a/other', 'a')).toBeUndefined();
    for (const j of joined) j.release();
    expect(bound.size).toBe(0);
    expect(bound.join('a/k')).toBeUndefined();
  });

  it("lets a tenant alone on the instance go up to the ceiling, and binds the limit from another tenant's first request", () => {
    const time = clock();
    const bound = new InFlight(
      () => 2,
      time.now,
      () => 6,
    );
    const a = take(bound, 'a', 8);
    expect(a).toHaveLength(6);
    // b's first request: a place, and from now on the adaptive limit of two binds a.
    const b = bound.enter('b/0', 'b');
    expect(b).toBeDefined();
    for (const h of a.slice(0, 5)) h.release();
    expect(bound.enter('a/after-b', 'a')).toBeUndefined();
    // b has not asked for PRESENT_MS: a is alone again, and may go back up to the ceiling.
    b!.release();
    time.advance(PRESENT_MS);
    expect(take(bound, 'a', 6, 'alone-again')).toHaveLength(5);
  });

  it("reports each tenant's share as it would be if it asked now", () => {
    const bound = new InFlight(() => 10);
    take(bound, 'a', 10);
    bound.enter('a/over', 'a');
    expect(Object.fromEntries(bound.shares(['a', 'b']))).toEqual({ a: 10, b: 5 });
  });
});

describe('the adaptive limit', () => {
  const settings: AdaptiveLimitSettings = { floor: 2, ceiling: 64, target: 1.5 };

  /** A limit on a clock of its own; `feed` sends samples `ms` apart. */
  function limiter(s: AdaptiveLimitSettings = settings) {
    let t = 0;
    const limit = new AdaptiveLimit(s, () => t);
    const feed = (latencies: number[], opts: { inFlight?: number; kind?: string; censored?: boolean } = {}) => {
      for (const latencyMs of latencies) {
        t += 50;
        limit.sample({
          kind: opts.kind ?? 'payment:succeeded:',
          latencyMs,
          inFlight: opts.inFlight ?? limit.limit,
          censored: opts.censored,
        });
      }
      return limit.limit;
    };
    return { limit, feed, advance: (ms: number) => (t += ms) };
  }
  const repeat = (latency: number, n: number) => Array.from({ length: n }, () => latency);

  it('starts at the ceiling, and stays there while operations take their unloaded time', () => {
    const { limit, feed } = limiter();
    expect(limit.limit).toBe(64);
    expect(feed(repeat(45, 200))).toBe(64);
    expect(limit.ratio).toBeCloseTo(1);
  });

  it('falls while operations queue (latency rising over the target), down to the floor at most', () => {
    const { feed } = limiter();
    feed(repeat(45, 20));
    const series = [60, 80, 110, 150, 200, 300, 400, 500].flatMap((l) => repeat(l, 10));
    const limits = series.map((l) => feed([l]));
    // Monotone once over the target, and all the way to the floor under heavy queueing.
    for (let i = 1; i < limits.length; i++) expect(limits[i]!).toBeLessThanOrEqual(limits[i - 1]!);
    expect(limits[limits.length - 1]).toBe(2);
    expect(feed(repeat(2_000, 100))).toBe(2);
  });

  it('cuts by how far the latency is over the target: a little slow, a little less', () => {
    const mild = limiter();
    mild.feed(repeat(45, 20));
    const severe = limiter();
    severe.feed(repeat(45, 20));
    expect(mild.feed(repeat(75, 10))).toBeGreaterThan(severe.feed(repeat(300, 10)));
  });

  it('rises again once the engine has room, up to the ceiling at most', () => {
    const { feed } = limiter();
    feed(repeat(45, 20));
    feed(repeat(500, 100));
    const rising = [feed(repeat(45, 50)), feed(repeat(45, 200)), feed(repeat(45, 2_000))];
    expect(rising[0]).toBeGreaterThan(2);
    expect(rising[1]).toBeGreaterThan(rising[0]!);
    expect(rising[2]).toBe(64);
  });

  it('does not rise while the limit is not in use', () => {
    const { feed } = limiter();
    feed(repeat(45, 20));
    const low = feed(repeat(500, 100));
    expect(feed(repeat(45, 500), { inFlight: 0 })).toBe(low);
  });

  it('settles where the latency is at its target on a saturated engine', () => {
    // An engine finishing 200 operations a second at most, 45 ms each unloaded: latency is
    // max(45 ms, in flight ÷ 200 per second) (Little's law past saturation); its knee is 9.
    const { limit, feed } = limiter({ floor: 1, ceiling: 64, target: 1.5 });
    const latencyAt = (inFlight: number) => Math.max(45, (inFlight / 200) * 1000);
    feed(repeat(45, 20), { inFlight: 1 });
    const seen: number[] = [];
    for (let i = 0; i < 3_000; i++) seen.push(feed([latencyAt(limit.limit)]));
    const settled = seen.slice(-500);
    // Past the knee (the engine saturated: all its throughput), with latency near its target.
    expect(Math.min(...settled)).toBeGreaterThanOrEqual(9);
    expect(Math.max(...settled.map(latencyAt)) / 45).toBeLessThanOrEqual(1.5 * 1.25);
  });

  it('compares each kind of operation with its own unloaded latency', () => {
    const { feed } = limiter();
    feed(repeat(45, 20), { kind: 'payment:succeeded:' });
    feed(repeat(400, 20), { kind: 'checkout:succeeded:' });
    // Both at their own unloaded latency: no cut, although a checkout takes 9 payments' time.
    expect(feed(repeat(45, 5), { kind: 'payment:succeeded:' })).toBe(64);
    expect(feed(repeat(400, 5), { kind: 'checkout:succeeded:' })).toBe(64);
  });

  it('takes a wait that ended first as a lower bound: it cuts only when already slow', () => {
    const { feed } = limiter();
    feed(repeat(45, 20));
    expect(feed(repeat(30, 10), { censored: true })).toBe(64);
    expect(feed(repeat(10_000, 10), { censored: true })).toBeLessThan(64);
  });

  it('forgets an unloaded latency after ten minutes or so: a slower world becomes the new normal', () => {
    const { feed, advance } = limiter();
    feed(repeat(45, 20));
    advance(11 * 60_000);
    // Twice as slow: queueing, as far as the limit can tell, for as long as it remembers 45 ms.
    expect(feed(repeat(90, 50))).toBeLessThan(64);
    advance(11 * 60_000);
    // 90 ms is the unloaded latency now: the limit rises back at it.
    expect(feed(repeat(90, 3_000))).toBe(64);
  });

  it('is fixed when the floor is the ceiling', () => {
    const { feed } = limiter({ floor: 8, ceiling: 8, target: 1.5 });
    feed(repeat(45, 20));
    expect(feed(repeat(900, 100))).toBe(8);
    expect(feed(repeat(45, 100))).toBe(8);
  });
});

describe("a refused tenant's Retry-After", () => {
  it('is 1 s while the tenant is refused now and then, later the more it is refused per place, at most 5 s', () => {
    let t = 0;
    const retry = new BusyRetryAfter(() => t);
    expect(retry.refused('a', 2)).toBe(1);
    // 8 refusals a second for 2 places still come back in 1 s; 40 in 5 s.
    const inOneSecond = (n: number, share: number) => {
      let last = 0;
      for (let i = 0; i < n; i++) last = retry.refused('b', share);
      return last;
    };
    expect(inOneSecond(8, 2)).toBe(1);
    expect(inOneSecond(8, 2)).toBe(2);
    t += 1_000;
    // The previous second counts too: the flood does not get 1 s back the moment a second turns.
    expect(retry.refused('b', 2)).toBe(2);
    expect(inOneSecond(100, 2)).toBe(MAX_SECONDS);
    // A quiet second later, and the next, it is back to 1 s; another tenant was never affected.
    t += 2_000;
    expect(retry.refused('b', 2)).toBe(1);
    expect(retry.refused('a', 2)).toBe(1);
  });
});
