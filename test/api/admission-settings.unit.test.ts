// The admission variables as the API reads them at start-up: their defaults, each form they
// take, and every malformed value refused with a line naming its variable (and never
// echoing a store URL's credentials).
import { describe, expect, it } from 'vitest';
import { loadApiConfig } from '../../client/api/config.js';
import { problemsOf } from '../support/config-problems.js';

const KEYS = 'sk_acme_0123456789abcdef=acme,sk_beta_0123456789abcdef=beta';
const admission = (env: Record<string, string>) => loadApiConfig({ RETRYSAFE_API_KEYS: KEYS, ...env }).admission;
const refused = (env: Record<string, string>) => problemsOf(() => loadApiConfig({ RETRYSAFE_API_KEYS: KEYS, ...env }));

describe('the in-flight limit', () => {
  it('adapts between a floor of 2 and a ceiling of 64, aiming at 1.5 × the unloaded latency, by default', () => {
    expect(admission({}).inFlight).toEqual({ floor: 2, ceiling: 64, target: 1.5 });
  });

  it('takes a floor, a ceiling and a target', () => {
    expect(
      admission({ RETRYSAFE_IN_FLIGHT_FLOOR: '4', RETRYSAFE_IN_FLIGHT_CEILING: ' 200 ', RETRYSAFE_LATENCY_TARGET: '2.25' })
        .inFlight,
    ).toEqual({ floor: 4, ceiling: 200, target: 2.25 });
  });

  it('is fixed when the floor is the ceiling', () => {
    expect(admission({ RETRYSAFE_IN_FLIGHT_FLOOR: '16', RETRYSAFE_IN_FLIGHT_CEILING: '16' }).inFlight).toMatchObject({
      floor: 16,
      ceiling: 16,
    });
  });

  it("still reads RETRYSAFE_MAX_IN_FLIGHT, its ceiling's former name", () => {
    expect(admission({ RETRYSAFE_MAX_IN_FLIGHT: '8' }).inFlight).toEqual({ floor: 2, ceiling: 8, target: 1.5 });
  });

  it.each([
    ['RETRYSAFE_IN_FLIGHT_FLOOR', '0', /must be between 1 and 100000/],
    ['RETRYSAFE_IN_FLIGHT_FLOOR', '-1', /must be a whole number/],
    ['RETRYSAFE_IN_FLIGHT_FLOOR', '2.5', /must be a whole number/],
    ['RETRYSAFE_IN_FLIGHT_FLOOR', 'few', /must be a whole number/],
    ['RETRYSAFE_IN_FLIGHT_CEILING', '0', /must be between 1 and 100000/],
    ['RETRYSAFE_IN_FLIGHT_CEILING', '100001', /must be between 1 and 100000/],
    ['RETRYSAFE_IN_FLIGHT_CEILING', '1e3', /must be a whole number/],
    ['RETRYSAFE_MAX_IN_FLIGHT', '0', /must be between 1 and 100000/],
    ['RETRYSAFE_MAX_IN_FLIGHT', 'lots', /must be a whole number/],
    ['RETRYSAFE_LATENCY_TARGET', '1', /must be above 1 and at most 100/],
    ['RETRYSAFE_LATENCY_TARGET', '0.5', /must be above 1 and at most 100/],
    ['RETRYSAFE_LATENCY_TARGET', '101', /must be above 1 and at most 100/],
    ['RETRYSAFE_LATENCY_TARGET', '1,5', /must be a number such as 1.5/],
    ['RETRYSAFE_LATENCY_TARGET', '150%', /must be a number such as 1.5/],
    ['RETRYSAFE_LATENCY_TARGET', '-2', /must be a number such as 1.5/],
  ])('refuses %s=%s', (name, raw, message) => {
    const problems = refused({ [name]: raw });
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(new RegExp(`^${name}=`));
    expect(problems[0]).toMatch(message);
  });

  it('refuses a floor above the ceiling, naming both', () => {
    expect(refused({ RETRYSAFE_IN_FLIGHT_FLOOR: '10', RETRYSAFE_IN_FLIGHT_CEILING: '8' })).toEqual([
      'RETRYSAFE_IN_FLIGHT_FLOOR=10 is above RETRYSAFE_IN_FLIGHT_CEILING=8: the floor of the in-flight limit must not exceed its ceiling',
    ]);
    expect(refused({ RETRYSAFE_MAX_IN_FLIGHT: '1' })).toEqual([
      'RETRYSAFE_IN_FLIGHT_FLOOR=2 is above RETRYSAFE_MAX_IN_FLIGHT=1: the floor of the in-flight limit must not exceed its ceiling',
    ]);
  });

  it('refuses the ceiling under both its names, naming the one to keep', () => {
    const problems = refused({ RETRYSAFE_MAX_IN_FLIGHT: '8', RETRYSAFE_IN_FLIGHT_CEILING: '8' });
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(
      /^RETRYSAFE_MAX_IN_FLIGHT and RETRYSAFE_IN_FLIGHT_CEILING are both set: .*keep only RETRYSAFE_IN_FLIGHT_CEILING$/,
    );
  });
});

describe("the store of the tenants' windows", () => {
  it('is the SQLite file .data/limits.db by default, or the file RETRYSAFE_LIMITS_DB names', () => {
    expect(admission({}).store).toEqual({ kind: 'sqlite', path: '.data/limits.db' });
    expect(admission({ RETRYSAFE_LIMITS_DB: ' /var/lib/retrysafe/limits.db ' }).store).toEqual({
      kind: 'sqlite',
      path: '/var/lib/retrysafe/limits.db',
    });
  });

  it('is PostgreSQL with RETRYSAFE_LIMITS_URL (postgres:// or postgresql://)', () => {
    for (const url of [
      'postgres://retrysafe:s3cret@db.internal:5432/limits',
      'postgresql://db.internal/limits?sslmode=require',
    ]) {
      expect(admission({ RETRYSAFE_LIMITS_URL: url }).store).toEqual({ kind: 'postgres', url });
    }
  });

  it('waits 200 ms for the store by default, or RETRYSAFE_LIMITS_TIMEOUT', () => {
    expect(admission({}).storeTimeoutMs).toBe(200);
    expect(admission({ RETRYSAFE_LIMITS_TIMEOUT: '1s' }).storeTimeoutMs).toBe(1_000);
  });

  it('refuses both stores at once, naming both', () => {
    const problems = refused({ RETRYSAFE_LIMITS_URL: 'postgres://db/limits', RETRYSAFE_LIMITS_DB: '/tmp/limits.db' });
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(/^RETRYSAFE_LIMITS_URL and RETRYSAFE_LIMITS_DB are both set: /);
  });

  it.each([
    ['not a url with s3cret', /^RETRYSAFE_LIMITS_URL is not a URL \(expected postgres:\/\//],
    [
      'mysql://user:s3cret@db/limits',
      /^RETRYSAFE_LIMITS_URL="mysql:\/\/db\/limits": must start with postgres:\/\/ or postgresql:\/\//,
    ],
    ['https://user:s3cret@db/limits', /must start with postgres:\/\//],
    ['postgres://user:s3cret@db.internal:5432', /^RETRYSAFE_LIMITS_URL="postgres:\/\/db.internal:5432": names no database/],
    ['postgres://user:s3cret@db.internal:5432/', /names no database/],
    ['postgres:///limits', /names no host/],
  ])('refuses RETRYSAFE_LIMITS_URL=%s without echoing its credentials', (raw, message) => {
    const problems = refused({ RETRYSAFE_LIMITS_URL: raw });
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(message);
    expect(problems[0]).not.toMatch(/s3cret/);
  });

  it.each([
    ['RETRYSAFE_LIMITS_DB', '   ', /^RETRYSAFE_LIMITS_DB=/],
    ['RETRYSAFE_LIMITS_TIMEOUT', 'soon', /is not a duration/],
    ['RETRYSAFE_LIMITS_TIMEOUT', '5ms', /below the minimum of 10 ms/],
    ['RETRYSAFE_LIMITS_TIMEOUT', '1m', /above the maximum of 10 seconds/],
  ])('refuses %s=%j', (name, raw, message) => {
    const problems = refused({ [name]: raw });
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(new RegExp(`^${name}=`));
    expect(problems[0]).toMatch(message);
  });
});

describe('the read limits', () => {
  it('are 100 a second per tenant and instance by default', () => {
    expect(admission({}).readLimits).toEqual({ tenants: new Map(), others: { quota: 100, windowSeconds: 1, spec: '100/s' } });
  });

  it('take the tenants named, keep the default for the others unless "*" is named', () => {
    const limits = admission({ RETRYSAFE_TENANT_READ_LIMITS: 'acme=200/s' }).readLimits;
    expect(limits.tenants.get('acme')).toMatchObject({ quota: 200, windowSeconds: 1 });
    expect(limits.others).toMatchObject({ quota: 100 });
    expect(admission({ RETRYSAFE_TENANT_READ_LIMITS: 'acme=unlimited,*=20/s' }).readLimits).toMatchObject({
      tenants: new Map([['acme', null]]),
      others: { quota: 20 },
    });
    expect(admission({ RETRYSAFE_TENANT_READ_LIMITS: '*=unlimited' }).readLimits.others).toBeNull();
  });

  it.each([
    ['acme', /^RETRYSAFE_TENANT_READ_LIMITS entry 1 has no "="/],
    ['acme=5', /^RETRYSAFE_TENANT_READ_LIMITS entry 1: the limit "5" has no unit/],
    ['acme=5/d', /the unit "d" is not one of s, m, h/],
    ['acme=0/s', /the count 0 must be from 1 to 1000000/],
    ['nobody=5/s', /^RETRYSAFE_TENANT_READ_LIMITS entry 1: no API key maps to tenant nobody/],
    ['acme=5/s,,*=1/s', /^RETRYSAFE_TENANT_READ_LIMITS entry 2 is empty/],
    ['*=5/s,*=6/s', /^RETRYSAFE_TENANT_READ_LIMITS entry 2 repeats "\*" of entry 1/],
  ])('refuses RETRYSAFE_TENANT_READ_LIMITS=%s', (raw, message) => {
    const problems = refused({ RETRYSAFE_TENANT_READ_LIMITS: raw });
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(message);
  });
});
