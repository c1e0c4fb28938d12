import { describe, expect, it } from 'vitest';
import { loadApiConfig, parseApiKeys } from '../../client/api/config.js';
import { problemsOf as problemsWhenLoading } from '../support/config-problems.js';

const SECRET_A = 'sk_acme_0123456789abcdef';
const SECRET_B = 'sk_beta_0123456789abcdef';

const problemsOf = (env: Record<string, string>): string[] => problemsWhenLoading(() => loadApiConfig(env));

describe('API config', () => {
  it('has the documented defaults, in dev mode without API keys', () => {
    expect(loadApiConfig({})).toEqual({
      host: '127.0.0.1',
      port: 3000,
      apiKeys: null,
      devMode: true,
      metricsToken: undefined,
      taskQueue: 'retrysafe',
      stepDeadlineMs: 60_000,
      attentionAfterMs: 300_000,
      settings: [],
      defaultWaitMs: 10_000,
      bodyLimit: 65_536,
      cacheSize: 10_000,
      cacheBytes: 64 * 1024 * 1024,
      cacheTtlMs: 600_000,
      engineTimeoutMs: 5_000,
      temporalUiUrl: 'http://localhost:8233',
      logLevel: 'info',
      webhooks: { tenants: new Set(), deadlineMs: 86_400_000 },
      admission: {
        tenantLimits: { tenants: new Map(), others: null },
        readLimits: { tenants: new Map(), others: { quota: 100, windowSeconds: 1, spec: '100/s' } },
        store: { kind: 'sqlite', path: '.data/limits.db' },
        storeTimeoutMs: 200,
        inFlight: { floor: 2, ceiling: 64, target: 1.5 },
      },
    });
  });

  it('reads durations, sizes and the UI URL', () => {
    const c = loadApiConfig({
      API_PORT: '8080',
      RETRYSAFE_STEP_DEADLINE: '2m',
      RETRYSAFE_DEFAULT_WAIT: '0',
      RETRYSAFE_BODY_LIMIT: '2048',
      RETRYSAFE_CACHE_TTL: '30s',
      RETRYSAFE_SETTINGS: 'checkout.holdTtlSeconds=90, fulfilment.packingDays=2',
      TEMPORAL_UI_URL: 'https://temporal.example.com/',
      RETRYSAFE_UI_LINKS: 'on',
    });
    expect(c).toMatchObject({
      port: 8080,
      stepDeadlineMs: 120_000,
      defaultWaitMs: 0,
      bodyLimit: 2048,
      cacheTtlMs: 30_000,
      settings: [
        { type: 'checkout', setting: 'holdTtlSeconds', value: 90 },
        { type: 'fulfilment', setting: 'packingDays', value: 2 },
      ],
      temporalUiUrl: 'https://temporal.example.com',
    });
  });

  it('parses API keys; several secrets may name one tenant (rotation)', () => {
    expect(parseApiKeys(` ${SECRET_A}=acme , ${SECRET_B}=beta.eu-1,sk_acme_rotated_000000=acme`)).toEqual([
      { secret: SECRET_A, tenant: 'acme' },
      { secret: SECRET_B, tenant: 'beta.eu-1' },
      { secret: 'sk_acme_rotated_000000', tenant: 'acme' },
    ]);
  });

  it.each([
    ['an entry without "="', `${SECRET_A}`, /entry 1 has no "="/],
    ['a short secret', 'short=acme', /entry 1: the secret is shorter than 16/],
    ['a tenant with "/"', `${SECRET_A}=acme/eu`, /entry 1: tenant "acme\/eu"/],
    ['an empty tenant', `${SECRET_A}=`, /entry 1: tenant ""/],
    ['a tenant longer than 64', `${SECRET_A}=${'t'.repeat(65)}`, /entry 1: tenant/],
    ['a secret with a space', 'sk acme 0123456789abcdef=acme', /entry 1: the secret may hold only printable ASCII/],
    ['a trailing comma', `${SECRET_A}=acme,`, /entry 2 is empty/],
    ['a repeated secret', `${SECRET_A}=acme,${SECRET_A}=beta`, /entry 2 repeats the secret of entry 1/],
  ])('refuses %s', (_name, value, message) => {
    const problems = problemsOf({ RETRYSAFE_API_KEYS: value });
    expect(problems.some((p) => message.test(p))).toBe(true);
  });

  it('never repeats a secret in its messages', () => {
    const problems = problemsOf({ RETRYSAFE_API_KEYS: `${SECRET_A}=bad/tenant,tooshort=acme,${SECRET_B}` });
    expect(problems).toHaveLength(3);
    for (const p of problems) {
      expect(p).not.toContain(SECRET_A);
      expect(p).not.toContain(SECRET_B);
      expect(p).not.toContain('tooshort');
    }
  });

  it.each([
    ['API_PORT', 'abc'],
    ['API_PORT', '70000'],
    ['RETRYSAFE_STEP_DEADLINE', 'soon'],
    ['RETRYSAFE_STEP_DEADLINE', '500ms'],
    ['RETRYSAFE_DEFAULT_WAIT', '2m'],
    ['RETRYSAFE_BODY_LIMIT', '64k'],
    ['RETRYSAFE_CACHE_SIZE', '-1'],
    ['RETRYSAFE_CACHE_TTL', '2h'],
    ['TEMPORAL_UI_URL', 'localhost:8233'],
    ['LOG_LEVEL', 'loud'],
  ])('refuses %s=%s with a message naming the variable', (name, value) => {
    const problems = problemsOf({ [name]: value });
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(new RegExp(`^${name}=`));
  });

  it.each([
    ['a setting without a type', 'holdTtlSeconds=90', 1],
    ['a value that is not a whole number', 'checkout.holdTtlSeconds=1.5', 1],
    ['a duration', 'checkout.holdTtlSeconds=90s', 1],
    ['a trailing comma', 'checkout.holdTtlSeconds=90,', 2],
  ])('refuses RETRYSAFE_SETTINGS with %s, naming the entry', (_what, value, entry) => {
    expect(problemsOf({ RETRYSAFE_SETTINGS: value })).toEqual([
      `RETRYSAFE_SETTINGS entry ${entry} must be <type>.<setting>=<integer> (e.g. checkout.holdTtlSeconds=600)`,
    ]);
  });

  it('refuses RETRYSAFE_HOLD_TTL, which earlier releases read, naming its replacement', () => {
    expect(problemsOf({ RETRYSAFE_HOLD_TTL: '90s' })).toEqual([
      "RETRYSAFE_HOLD_TTL is no longer read: the hold time is the checkout definition's own setting; set RETRYSAFE_SETTINGS=checkout.holdTtlSeconds=<seconds> instead",
    ]);
  });

  it('reports every bad variable at once', () => {
    const problems = problemsOf({ API_PORT: 'abc', RETRYSAFE_STEP_DEADLINE: 'soon', RETRYSAFE_API_KEYS: 'x=y' });
    expect(problems).toHaveLength(3);
    expect(problems.join('\n')).toMatch(/API_PORT=/);
    expect(problems.join('\n')).toMatch(/RETRYSAFE_STEP_DEADLINE=/);
    expect(problems.join('\n')).toMatch(/RETRYSAFE_API_KEYS entry 1: the secret is shorter/);
  });
});
