// Configuration fails closed and tells no secret: an API-key list that is set but blank
// or malformed refuses to start; dev mode (no keys) only where no one else can reach it,
// unless asked for by name; tenants see no Web UI link unless the operator turns them on;
// the metrics token is an operator's secret of its own; caches are bounded in bytes; and a
// config error never repeats a URL's credentials.
import { describe, expect, it } from 'vitest';
import { loadApiConfig } from '../../client/api/config.js';
import { isLoopbackAddress, isLoopbackHost } from '../../client/api/loopback.js';
import { withoutCredentials } from '../../common/env.js';
import { loadWorkerConfig } from '../../worker/config.js';
import { problemsOf } from '../support/config-problems.js';

const KEY = 'sk_acme_0123456789abcdef';
const TOKEN = 'mt_operator_0123456789abcdef';

describe('RETRYSAFE_API_KEYS', () => {
  it.each([
    ['empty', ''],
    ['blank', '   '],
    ['a tab and a newline', '\t\n'],
  ])('set but %s refuses to start, naming the variable (never dev mode)', (_name, value) => {
    const problems = problemsOf(() => loadApiConfig({ RETRYSAFE_API_KEYS: value }));
    expect(problems).toEqual([
      'RETRYSAFE_API_KEYS is set but blank; give it <secret>=<tenant>,... or unset it for dev mode (no authentication)',
    ]);
  });

  it('malformed refuses to start, naming the variable', () => {
    for (const value of [',', 'not-a-key', `${KEY}=acme,,`]) {
      const problems = problemsOf(() => loadApiConfig({ RETRYSAFE_API_KEYS: value }));
      expect(problems.length, value).toBeGreaterThan(0);
      for (const p of problems) expect(p).toMatch(/^RETRYSAFE_API_KEYS /);
    }
  });

  it('unset is dev mode, said by the config', () => {
    expect(loadApiConfig({})).toMatchObject({ apiKeys: null, devMode: true });
    expect(loadApiConfig({ RETRYSAFE_API_KEYS: `${KEY}=acme` })).toMatchObject({ devMode: false });
  });
});

describe('dev mode', () => {
  it.each(['127.0.0.1', '127.0.0.53', 'localhost', '::1', '[::1]', 'LOCALHOST'])('may listen on %s', (host) => {
    expect(loadApiConfig({ API_HOST: host }).devMode).toBe(true);
  });

  it.each(['0.0.0.0', '::', '10.0.0.7', 'api.example.com', '::ffff:10.0.0.1'])(
    'refuses to start on %s, which other machines can reach, unless RETRYSAFE_DEV_MODE=on',
    (host) => {
      const problems = problemsOf(() => loadApiConfig({ API_HOST: host }));
      expect(problems).toHaveLength(1);
      expect(problems[0]).toMatch(/^RETRYSAFE_API_KEYS is not set, so the API would run in dev mode/);
      expect(problems[0]).toContain(`API_HOST=${host}`);
      expect(problems[0]).toContain('RETRYSAFE_DEV_MODE=on');
      expect(loadApiConfig({ API_HOST: host, RETRYSAFE_DEV_MODE: 'on' }).devMode).toBe(true);
    },
  );

  it('asked for beside API keys, or with another word than on/off, is refused', () => {
    expect(problemsOf(() => loadApiConfig({ RETRYSAFE_API_KEYS: `${KEY}=acme`, RETRYSAFE_DEV_MODE: 'on' }))).toEqual([
      'RETRYSAFE_DEV_MODE=on asks for dev mode (no authentication), but RETRYSAFE_API_KEYS is set',
    ]);
    expect(problemsOf(() => loadApiConfig({ RETRYSAFE_DEV_MODE: 'yes' }))).toEqual([
      'RETRYSAFE_DEV_MODE="yes": must be on or off',
    ]);
  });

  it('knows loopback addresses in every spelling, and nothing else', () => {
    for (const a of ['127.0.0.1', '127.255.0.1', '::1', '0:0:0:0:0:0:0:1', '::ffff:127.0.0.1'])
      expect(isLoopbackAddress(a), a).toBe(true);
    for (const a of ['10.0.0.1', '0.0.0.0', '::', '::ffff:192.168.1.1', '128.0.0.1', 'localhost', '', undefined]) {
      expect(isLoopbackAddress(a), String(a)).toBe(false);
    }
    expect(isLoopbackHost('localhost')).toBe(true);
    expect(isLoopbackHost('localhost.evil.example')).toBe(false);
  });
});

describe('RETRYSAFE_UI_LINKS', () => {
  it('is off by default with API keys, on in dev mode, and either way on request', () => {
    expect(loadApiConfig({ RETRYSAFE_API_KEYS: `${KEY}=acme` }).temporalUiUrl).toBeUndefined();
    expect(loadApiConfig({}).temporalUiUrl).toBe('http://localhost:8233');
    expect(loadApiConfig({ RETRYSAFE_API_KEYS: `${KEY}=acme`, RETRYSAFE_UI_LINKS: 'on' }).temporalUiUrl).toBe(
      'http://localhost:8233',
    );
    expect(loadApiConfig({ RETRYSAFE_UI_LINKS: 'off' }).temporalUiUrl).toBeUndefined();
    expect(problemsOf(() => loadApiConfig({ RETRYSAFE_UI_LINKS: 'true' }))).toEqual([
      'RETRYSAFE_UI_LINKS="true": must be on or off',
    ]);
  });
});

describe('RETRYSAFE_METRICS_TOKEN', () => {
  it('is read, and refused short, with spaces, or equal to an API key, never repeated', () => {
    expect(loadApiConfig({ RETRYSAFE_METRICS_TOKEN: ` ${TOKEN} ` }).metricsToken).toBe(TOKEN);
    expect(loadApiConfig({ RETRYSAFE_METRICS_TOKEN: '' }).metricsToken).toBeUndefined();
    for (const [value, keys, message] of [
      ['tok3n', undefined, /shorter than 16/],
      ['tok3n_0123456789 abcdef', undefined, /only visible ASCII/],
      [KEY, `${KEY}=acme`, /also a secret of RETRYSAFE_API_KEYS/],
    ] as const) {
      const problems = problemsOf(() =>
        loadApiConfig({ RETRYSAFE_METRICS_TOKEN: value, ...(keys ? { RETRYSAFE_API_KEYS: keys } : {}) }),
      );
      expect(problems).toHaveLength(1);
      expect(problems[0]).toMatch(/^RETRYSAFE_METRICS_TOKEN /);
      expect(problems[0]).toMatch(message);
      expect(problems[0]).not.toContain(value);
    }
  });
});

describe('RETRYSAFE_CACHE_BYTES', () => {
  it('bounds the outcome cache in bytes: 64 MiB unless said otherwise, in B, KiB, MiB or GiB', () => {
    expect(loadApiConfig({}).cacheBytes).toBe(64 * 1024 ** 2);
    expect(loadApiConfig({ RETRYSAFE_CACHE_BYTES: '512MiB' }).cacheBytes).toBe(512 * 1024 ** 2);
    expect(loadApiConfig({ RETRYSAFE_CACHE_BYTES: '2GiB' }).cacheBytes).toBe(2 * 1024 ** 3);
    expect(loadApiConfig({ RETRYSAFE_CACHE_BYTES: '2097152' }).cacheBytes).toBe(2 * 1024 ** 2);
    for (const value of ['lots', '1KiB', '64MB', '17GiB', '-1']) {
      const problems = problemsOf(() => loadApiConfig({ RETRYSAFE_CACHE_BYTES: value }));
      expect(problems, value).toHaveLength(1);
      expect(problems[0]).toMatch(/^RETRYSAFE_CACHE_BYTES=.*must be a size from 1 MiB to 16 GiB/);
    }
  });
});

describe('a config error about a URL', () => {
  it("never repeats the URL's user and password", () => {
    const secret = 's3cr3t-pa55';
    for (const [load, name] of [
      [() => loadApiConfig({ TEMPORAL_UI_URL: `ftp://ops:${secret}@ui.example` }), 'TEMPORAL_UI_URL'],
      [() => loadWorkerConfig({ BANK_URL: `http://bank:${secret}@bank.example:99999` }), 'BANK_URL'],
      [() => loadWorkerConfig({ RETRYSAFE_SERVICES: `bank=gopher://u:${secret}@r.example/x` }), 'RETRYSAFE_SERVICES'],
      [() => loadWorkerConfig({ RETRYSAFE_SERVICES: `shipping=ftp://u:${secret}@s.example` }), 'RETRYSAFE_SERVICES'],
      [() => loadApiConfig({ RETRYSAFE_WEBHOOKS: `acme=ftp://u:${secret}@h.example` }), 'RETRYSAFE_WEBHOOKS'],
    ] as const) {
      const problems = problemsOf(load);
      expect(problems.join('\n'), name).toContain(name);
      expect(problems.join('\n'), name).not.toContain(secret);
    }
  });

  it('shows the rest of the value, so the mistake can be found', () => {
    expect(problemsOf(() => loadApiConfig({ TEMPORAL_UI_URL: 'http://ui:pw@ui.example:99999' }))[0]).toMatch(
      /^TEMPORAL_UI_URL="http:\/\/\*\*\*@ui\.example:99999"/,
    );
    expect(withoutCredentials('see https://a:b@x.example/p and http://c@y.example')).toBe(
      'see https://***@x.example/p and http://***@y.example',
    );
    expect(withoutCredentials('http://x.example/a@b')).toBe('http://x.example/a@b');
  });
});
