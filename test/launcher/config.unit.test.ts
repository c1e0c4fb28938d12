// The launcher's flags and configuration: what it accepts, its defaults, the cluster's
// ports, and each bad flag or variable refused with a line that names it.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { loadLauncherConfig, parseFlags, UsageError } from '../../tools/launcher/options.js';
import { stackParts, validateParts } from '../../tools/launcher/parts.js';
import { problemsOf } from '../support/config-problems.js';
import { CLUSTER, FAKE_ROOT, stackOf } from './fixtures.js';

describe('flags', () => {
  it('accepts --reset, --faults, --cluster, --traces and --help', () => {
    expect(parseFlags(['--reset', '--faults'])).toEqual({
      reset: true,
      faults: true,
      cluster: false,
      traces: false,
      help: false,
      operations: [],
    });
    expect(parseFlags(['--cluster']).cluster).toBe(true);
    expect(parseFlags(['--traces']).traces).toBe(true);
    expect(parseFlags(['-h']).help).toBe(true);
  });

  it('takes --operations <folder>, as often as given', () => {
    expect(parseFlags(['--operations', 'examples/shipping']).operations).toEqual(['examples/shipping']);
    expect(parseFlags(['--operations=a', '--reset', '--operations', 'b,c']).operations).toEqual(['a', 'b,c']);
  });

  it('refuses --operations without a folder', () => {
    expect(() => parseFlags(['--operations'])).toThrow(new UsageError("Option '--operations <value>' argument missing"));
    expect(() => parseFlags(['--operations', '--reset'])).toThrow(UsageError);
  });

  it('refuses unknown options, positionals and values on switches in one line', () => {
    expect(() => parseFlags(['--rest'])).toThrow(new UsageError("unknown option '--rest'"));
    expect(() => parseFlags(['now'])).toThrow(new UsageError("unexpected argument 'now'"));
    expect(() => parseFlags(['--reset=yes'])).toThrow(UsageError);
    expect(() => parseFlags(['--traces=zipkin'])).toThrow(new UsageError("Option '--traces' does not take an argument"));
  });
});

describe('configuration', () => {
  afterEach(() => {
    vi.unstubAllEnvs();
  });

  it('defaults to the embedded dev server, .data at the repo root and a 7-day retention', () => {
    const c = loadLauncherConfig(FAKE_ROOT, {});
    expect(c.temporal).toEqual({ mode: 'embedded', host: '127.0.0.1', port: 7233, uiPort: 8233, namespace: 'default' });
    expect(c.dataDir).toBe('/repo/.data');
    expect(c.retentionMs).toBe(7 * 24 * 3_600_000);
    expect([c.bank.port, c.workerMetricsPort, c.api.port]).toEqual([4001, 9464, 3000]);
  });

  it('uses the cluster named by TEMPORAL_ADDRESS instead of a dev server', () => {
    const c = loadLauncherConfig(FAKE_ROOT, { TEMPORAL_ADDRESS: 'temporal.example:7233', TEMPORAL_NAMESPACE: 'payments' });
    expect(c.temporal).toMatchObject({ mode: 'external', address: 'temporal.example:7233', namespace: 'payments' });
  });

  it('with --cluster, runs its own cluster on TEMPORAL_PORT with two workers and two APIs, in .data/cluster', () => {
    const c = loadLauncherConfig(FAKE_ROOT, { API_PORT: '3100' }, { cluster: true });
    expect(c.temporal).toEqual({ mode: 'cluster', host: '127.0.0.1', port: 7233, uiPort: 8233, namespace: 'default' });
    expect(c.dataDir).toBe('/repo/.data/cluster');
    expect(c.instances).toBe(2);
    const parts = stackParts(stackOf(c, { temporal: CLUSTER }));
    expect(parts.map((p) => p.name)).toEqual(['bank', 'reservations', 'worker-1', 'worker-2', 'api-1', 'api-2']);
    expect(parts.flatMap((p) => p.ports.map((claim) => `${claim.part}:${claim.port}`))).toEqual([
      'bank:4001',
      'reservations:4002',
      'worker-1:9464',
      'worker-2:9465',
      'api-1:3100',
      'api-2:3101',
    ]);
    // Pointed at a cluster of our own: credentials meant for another cluster stay out.
    expect(parts.every((p) => p.unsetEnv?.includes('TEMPORAL_API_KEY'))).toBe(true);
    // Both APIs count tenants' rates in one file in the data dir.
    const apis = parts.filter((p) => p.name.startsWith('api-'));
    expect(apis.map((p) => p.env.RETRYSAFE_LIMITS_DB)).toEqual([
      '/repo/.data/cluster/limits.db',
      '/repo/.data/cluster/limits.db',
    ]);
    // Or, once the cluster names its PostgreSQL database for them, there (one store across hosts).
    const limitsUrl = 'postgres://postgres@127.0.0.1:7236/retrysafe_limits';
    const onPostgres = stackParts(stackOf(c, { temporal: { ...CLUSTER, cluster: { ...CLUSTER.cluster!, limitsUrl } } }));
    const limited = onPostgres.filter((p) => p.name.startsWith('api-'));
    expect(limited.map((p) => [p.env.RETRYSAFE_LIMITS_URL, p.env.RETRYSAFE_LIMITS_DB])).toEqual([
      [limitsUrl, undefined],
      [limitsUrl, undefined],
    ]);
    for (const api of limited) expect(() => api.validate({ ...api.env })).not.toThrow();
  });

  it("with --cluster, refuses TEMPORAL_ADDRESS and a port inside the cluster's block", () => {
    const onCluster = (env: Record<string, string>) => problemsOf(() => loadLauncherConfig(FAKE_ROOT, env, { cluster: true }));
    expect(onCluster({ TEMPORAL_ADDRESS: 'elsewhere:7233' })[0]).toMatch(
      /^TEMPORAL_ADDRESS=elsewhere:7233: --cluster starts a cluster of its own/,
    );
    expect(onCluster({ API_PORT: '7254' })).toEqual([
      "API_PORT=7254 is inside the cluster's ports 7233-7254 (from TEMPORAL_PORT)",
    ]);
    expect(onCluster({ BANK_PORT: '3001' })).toEqual(['BANK_PORT and API_PORT+1 are both 3001: each part needs its own port']);
  });

  it('names each bad variable: a non-number port, a non-duration, a retention under one hour', () => {
    expect(problemsOf(() => loadLauncherConfig(FAKE_ROOT, { API_PORT: 'abc', RETRYSAFE_RETENTION: 'forever' }))).toEqual([
      expect.stringMatching(/^RETRYSAFE_RETENTION="forever": .*not a duration/),
      expect.stringMatching(/^API_PORT="abc": must be a whole number/),
    ]);
    expect(problemsOf(() => loadLauncherConfig(FAKE_ROOT, { RETRYSAFE_RETENTION: '59m' }))[0]).toMatch(
      /below the minimum of 1 hour \(Temporal's floor/,
    );
  });

  it('refuses port 0 and two parts on one port', () => {
    expect(problemsOf(() => loadLauncherConfig(FAKE_ROOT, { BANK_PORT: '0' }))[0]).toMatch(
      /^BANK_PORT="0": must be a fixed port/,
    );
    expect(problemsOf(() => loadLauncherConfig(FAKE_ROOT, { API_PORT: '4001' }))).toEqual([
      'BANK_PORT and API_PORT are both 4001: each part needs its own port',
    ]);
  });

  it('with --traces, runs Zipkin on ZIPKIN_PORT and points every part at it', () => {
    expect(loadLauncherConfig(FAKE_ROOT, {}).traces).toBeUndefined();
    const c = loadLauncherConfig(FAKE_ROOT, {}, { traces: true });
    expect(c.traces).toEqual({ zipkinPort: 9411 });
    expect(loadLauncherConfig(FAKE_ROOT, { ZIPKIN_PORT: '19411' }, { traces: true }).traces).toEqual({ zipkinPort: 19411 });
    const traces = { spans: 'http://127.0.0.1:9411/api/v2/spans', ui: 'http://localhost:9411/zipkin/' };
    for (const part of stackParts(stackOf(c, { traces }))) {
      expect(part.env).toMatchObject({
        OTEL_TRACES_EXPORTER: 'zipkin',
        OTEL_EXPORTER_ZIPKIN_ENDPOINT: 'http://127.0.0.1:9411/api/v2/spans',
      });
    }
    // Without it, the parts are left the OpenTelemetry variables of the launcher's environment.
    for (const part of stackParts(stackOf(loadLauncherConfig(FAKE_ROOT, {}))))
      expect(part.env).not.toHaveProperty('OTEL_TRACES_EXPORTER');
  });

  it('with --traces, refuses a bad ZIPKIN_PORT and one another part takes', () => {
    expect(problemsOf(() => loadLauncherConfig(FAKE_ROOT, { ZIPKIN_PORT: 'zip' }, { traces: true }))[0]).toMatch(
      /^ZIPKIN_PORT="zip": must be a whole number/,
    );
    expect(problemsOf(() => loadLauncherConfig(FAKE_ROOT, { ZIPKIN_PORT: '3000' }, { traces: true }))).toEqual([
      'API_PORT and ZIPKIN_PORT are both 3000: each part needs its own port',
    ]);
  });

  it('checks the OpenTelemetry variables up front, once for all the parts', () => {
    const stack = stackOf(loadLauncherConfig(FAKE_ROOT, {}));
    vi.stubEnv('OTEL_TRACES_EXPORTER', 'jaeger');
    vi.stubEnv('OTEL_TRACES_SAMPLER_ARG', 'half');
    vi.stubEnv('OTEL_TRACES_SAMPLER', 'traceidratio');
    expect(problemsOf(() => validateParts(stack))).toEqual([
      expect.stringMatching(/^OTEL_TRACES_EXPORTER="jaeger": "jaeger" is not an exporter/),
      expect.stringMatching(/^OTEL_TRACES_SAMPLER_ARG="half": must be a ratio/),
    ]);
  });

  it("checks every child's own settings up front, without echoing an API key secret", () => {
    const stack = stackOf(loadLauncherConfig(FAKE_ROOT, {}));
    vi.stubEnv('RETRYSAFE_API_KEYS', 'tooshort=acme');
    const problems = problemsOf(() => validateParts(stack));
    expect(problems).toEqual([expect.stringMatching(/^RETRYSAFE_API_KEYS entry 1: the secret is shorter.*\(api\)$/)]);
    expect(problems.join()).not.toContain('tooshort');
    vi.stubEnv('RETRYSAFE_API_KEYS', 'a-long-enough-secret-0001=acme');
    expect(validateParts(stack)).toEqual({ apiKeyCount: 1, tenants: ['acme'] });
  });
});
