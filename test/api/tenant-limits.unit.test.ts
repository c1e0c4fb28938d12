// RETRYSAFE_TENANT_LIMITS and the other admission variables, as the API parses them: every
// form the grammar accepts, and one clear line for each bad entry.
import { describe, expect, it } from 'vitest';
import { describeRate, parseTenantLimits, rateFor } from '../../client/api/admission/tenant-limits.js';
import { loadApiConfig } from '../../client/api/config.js';
import { problemsOf } from '../support/config-problems.js';

const KEYS = 'sk_acme_0123456789abcdef=acme,sk_beta_0123456789abcdef=beta,sk_gamma_0123456789abcd=gamma.eu-1';

const limitsOf = (raw: string, keys = KEYS) =>
  loadApiConfig({ RETRYSAFE_API_KEYS: keys, RETRYSAFE_TENANT_LIMITS: raw }).admission.tenantLimits;

describe('RETRYSAFE_TENANT_LIMITS', () => {
  it('reads a rate per second, minute and hour, and * for every tenant not named', () => {
    const limits = limitsOf(' acme = 50/s , beta=600/m,gamma.eu-1=10000/h, *=20/s ');
    expect(rateFor(limits, 'acme')).toEqual({ quota: 50, windowSeconds: 1, spec: '50/s' });
    expect(rateFor(limits, 'beta')).toEqual({ quota: 600, windowSeconds: 60, spec: '600/m' });
    expect(rateFor(limits, 'gamma.eu-1')).toEqual({ quota: 10_000, windowSeconds: 3600, spec: '10000/h' });
    expect(rateFor(limits, 'anyone-else')).toEqual({ quota: 20, windowSeconds: 1, spec: '20/s' });
  });

  it('limits nobody when unset or empty, and then needs no store', () => {
    for (const raw of [undefined, '', '   ']) {
      const limits = loadApiConfig({ RETRYSAFE_TENANT_LIMITS: raw }).admission.tenantLimits;
      expect(rateFor(limits, 'default')).toBeNull();
      expect(limits.tenants.size).toBe(0);
    }
  });

  it('leaves tenants not named unlimited when there is no *', () => {
    const limits = limitsOf('acme=5/s');
    expect(rateFor(limits, 'acme')?.quota).toBe(5);
    expect(rateFor(limits, 'beta')).toBeNull();
  });

  it('exempts a named tenant from * with unlimited', () => {
    const limits = limitsOf('*=20/s,beta=unlimited');
    expect(rateFor(limits, 'beta')).toBeNull();
    expect(rateFor(limits, 'acme')?.quota).toBe(20);
  });

  it('knows the dev-mode tenant, default, without API keys', () => {
    const limits = loadApiConfig({ RETRYSAFE_TENANT_LIMITS: 'default=3/m' }).admission.tenantLimits;
    expect(rateFor(limits, 'default')).toMatchObject({ quota: 3, windowSeconds: 60 });
  });

  it('says the limit in words in the 429 detail', () => {
    expect(describeRate({ quota: 50, windowSeconds: 1, spec: '50/s' })).toBe('50 new operations per second');
    expect(describeRate({ quota: 1, windowSeconds: 60, spec: '1/m' })).toBe('1 new operation per minute');
    expect(describeRate({ quota: 7, windowSeconds: 3600, spec: '7/h' })).toBe('7 new operations per hour');
  });

  it.each([
    ['an empty entry in the middle', 'acme=5/s,,*=1/s', /entry 2 is empty/],
    ['a trailing comma', 'acme=5/s,', /entry 2 is empty/],
    ['an entry without "="', 'acme', /entry 1 has no "="/],
    ['an empty tenant', '=5/s', /entry 1: tenant "" must be "\*" or 1-64 characters/],
    ['a tenant with "/"', 'acme/eu=5/s', /entry 1: tenant "acme\/eu" must be "\*"/],
    ['a tenant of 65 characters', `${'a'.repeat(65)}=5/s`, /entry 1: tenant "a+" must be "\*" or 1-64/],
    ['a tenant no API key maps to', 'acne=5/s', /entry 1: no API key maps to tenant acne \(tenants: acme, beta, gamma.eu-1\)/],
    ['a tenant twice', 'acme=5/s,beta=1/s,acme=9/m', /entry 3 repeats tenant acme of entry 1/],
    ['* twice', '*=5/s,*=6/s', /entry 2 repeats "\*" of entry 1/],
    ['a zero count', 'acme=0/s', /entry 1: the count 0 must be from 1 to 1000000/],
    ['a negative count', 'acme=-5/s', /entry 1: the count "-5" must be a whole number from 1 to 1000000/],
    ['a fractional count', 'acme=2.5/s', /entry 1: the count "2.5" must be a whole number/],
    ['a count in words', 'acme=ten/s', /entry 1: the count "ten" must be a whole number/],
    ['an empty count', 'acme=/s', /entry 1: the count "" must be a whole number/],
    ['a count above the maximum', 'acme=1000001/s', /entry 1: the count 1000001 must be from 1 to 1000000/],
    ['no unit', 'acme=50', /entry 1: the limit "50" has no unit \(expected <count>\/s, <count>\/m, <count>\/h or unlimited\)/],
    ['an empty limit', 'acme=', /entry 1: the limit "" has no unit/],
    ['an unknown unit', 'acme=5/d', /entry 1: the unit "d" is not one of s, m, h/],
    ['a unit spelt out', 'acme=5/sec', /entry 1: the unit "sec" is not one of s, m, h/],
    ['an upper-case unit', 'acme=5/S', /entry 1: the unit "S" is not one of s, m, h/],
    ['an empty unit', 'acme=5/', /entry 1: the unit "" is not one of s, m, h/],
    ['a window with a multiple', 'acme=5/10s', /entry 1: the unit "10s" is not one of s, m, h/],
    ['a burst suffix', 'acme=5/s;burst=10', /entry 1: the unit "s;burst=10" is not one of s, m, h/],
    ['"none" for unlimited', 'acme=none', /entry 1: the limit "none" has no unit/],
  ])('refuses %s', (_name, raw, message) => {
    const problems = problemsOf(() => limitsOf(raw));
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(/^RETRYSAFE_TENANT_LIMITS /);
    expect(problems[0]).toMatch(message);
  });

  it("names every bad entry at once, beside the other variables' problems", () => {
    const problems = problemsOf(() =>
      loadApiConfig({ RETRYSAFE_TENANT_LIMITS: 'acme=0/s,*=5/x', RETRYSAFE_MAX_IN_FLIGHT: '0', API_PORT: 'x' }),
    );
    expect(problems).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/entry 1: the count 0/),
        expect.stringMatching(/entry 2: the unit "x"/),
        expect.stringMatching(/^RETRYSAFE_MAX_IN_FLIGHT="0": must be between 1 and 100000/),
        expect.stringMatching(/^API_PORT=/),
      ]),
    );
  });

  it('does not blame a limit on an unknown tenant when the API keys themselves are bad', () => {
    const problems = problemsOf(() => limitsOf('acme=5/s', 'short=acme'));
    expect(problems.some((p) => p.includes('RETRYSAFE_TENANT_LIMITS'))).toBe(false);
    expect(problems.some((p) => p.includes('RETRYSAFE_API_KEYS'))).toBe(true);
  });

  it('parses without checking tenants when none are known', () => {
    expect(parseTenantLimits('whoever=1/s', undefined).tenants.get('whoever')?.quota).toBe(1);
  });
});
