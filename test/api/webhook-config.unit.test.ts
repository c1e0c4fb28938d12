// The completion webhooks' variables, as the API and the worker parse them: each bad value
// refused with a line naming its variable, and never a secret (or a URL, which may carry a
// token) repeated in a message. Each tenant has secrets of its own; the one shared secret of
// earlier releases is refused by name.
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { loadApiConfig } from '../../client/api/config.js';
import { problemsOf } from '../support/config-problems.js';
import { loadWorkerConfig } from '../../worker/config.js';

const SECRET = `whsec_${randomBytes(32).toString('base64')}`;

describe('RETRYSAFE_WEBHOOKS', () => {
  it('gives the API the tenants that have a webhook, and the default deadline of 24 h', () => {
    const config = loadApiConfig({
      RETRYSAFE_WEBHOOKS: ' acme=https://hooks.acme.example/retrysafe , beta.eu-1=http://127.0.0.1:9000/h',
    });
    expect(config.webhooks).toEqual({ tenants: new Set(['acme', 'beta.eu-1']), deadlineMs: 86_400_000 });
  });

  it("gives the worker each tenant URL and each tenant's secrets", () => {
    const config = loadWorkerConfig({
      RETRYSAFE_WEBHOOKS: 'acme=https://hooks.acme.example/retrysafe?token=a=b',
      RETRYSAFE_WEBHOOK_SECRETS: `acme=${SECRET}`,
    });
    expect(config.webhooks.urls).toEqual(new Map([['acme', 'https://hooks.acme.example/retrysafe?token=a=b']]));
    expect(config.webhooks.secrets).toEqual(new Map([['acme', [SECRET]]]));
  });

  it('is optional: no webhooks, no secret needed', () => {
    expect(loadWorkerConfig({}).webhooks).toEqual({ urls: new Map(), secrets: new Map() });
    expect(loadApiConfig({}).webhooks.tenants.size).toBe(0);
  });

  it.each([
    ['an entry without "="', 'acme', /RETRYSAFE_WEBHOOKS entry 1 is not <tenant>=<url>/],
    ['an empty entry', 'acme=https://a.example/h,', /RETRYSAFE_WEBHOOKS entry 2 is not <tenant>=<url>/],
    ['a tenant with "/"', 'acme/eu=https://a.example/h', /entry 1: the tenant must be 1-64 characters/],
    ['a relative URL', 'acme=/hooks', /entry 1 \(tenant acme\): the URL must be an absolute http/],
    ['another scheme', 'acme=ftp://a.example/h', /entry 1 \(tenant acme\): the URL must be an absolute http/],
    ['a tenant twice', 'acme=https://a.example/1,acme=https://a.example/2', /entry 2: tenant acme already has a webhook/],
  ])('refuses %s, in the API and in the worker', (_name, value, message) => {
    for (const problems of [
      problemsOf(() => loadApiConfig({ RETRYSAFE_WEBHOOKS: value })),
      problemsOf(() => loadWorkerConfig({ RETRYSAFE_WEBHOOKS: value, RETRYSAFE_WEBHOOK_SECRETS: `acme=${SECRET}` })),
    ]) {
      expect(problems).toHaveLength(1);
      expect(problems[0]).toMatch(message);
    }
  });

  it('never repeats a URL in its messages (it may carry a token)', () => {
    const problems = problemsOf(() => loadApiConfig({ RETRYSAFE_WEBHOOKS: 'acme=ftp://user:tok3n@a.example/h' }));
    expect(problems.join('\n')).not.toContain('tok3n');
  });
});

describe('RETRYSAFE_WEBHOOK_SECRETS', () => {
  const secret = () => `whsec_${randomBytes(32).toString('base64')}`;

  it('gives each tenant its own secrets, several while one rotates, in the order given', () => {
    const [old, next, beta] = [secret(), secret(), secret()];
    const config = loadWorkerConfig({
      RETRYSAFE_WEBHOOKS: 'acme=https://a.example/h,beta=https://b.example/h',
      RETRYSAFE_WEBHOOK_SECRETS: ` acme=${old}  ${next} , beta=${beta}`,
    });
    expect(config.webhooks.secrets).toEqual(
      new Map([
        ['acme', [old, next]],
        ['beta', [beta]],
      ]),
    );
  });

  it('is required by the worker for every tenant that has a webhook, naming the tenants without one', () => {
    expect(
      problemsOf(() =>
        loadWorkerConfig({
          RETRYSAFE_WEBHOOKS: 'acme=https://a.example/h,beta=https://b.example/h,gamma=https://c.example/h',
          RETRYSAFE_WEBHOOK_SECRETS: `beta=${SECRET}`,
        }),
      ),
    ).toEqual([
      'RETRYSAFE_WEBHOOK_SECRETS has no signing secret for tenants acme, gamma, which RETRYSAFE_WEBHOOKS gives a URL (each tenant with a webhook needs its own secret)',
    ]);
  });

  it("refuses one secret shared by two tenants: each could forge the other's events", () => {
    const problems = problemsOf(() =>
      loadWorkerConfig({ RETRYSAFE_WEBHOOK_SECRETS: `acme=${SECRET},beta=${secret()} ${SECRET}` }),
    );
    expect(problems).toEqual(['RETRYSAFE_WEBHOOK_SECRETS: tenants acme and beta share a secret; each needs its own']);
  });

  it.each([
    ['no whsec_ prefix', randomBytes(32).toString('base64'), /secret 1: must start with "whsec_"/],
    ['not base64', `whsec_${'!'.repeat(40)}`, /secret 1: what follows "whsec_" must be standard base64/],
    [
      'base64url instead of base64',
      `whsec_${Buffer.from([251, 255, 191, ...randomBytes(30)]).toString('base64url')}`,
      /standard base64/,
    ],
    ['too few random bytes', `whsec_${randomBytes(16).toString('base64')}`, /secret 1: holds 16 bytes; at least 24 random bytes/],
  ])('refuses %s, naming the tenant and never repeating the secret', (_name, bad, message) => {
    const problems = problemsOf(() =>
      loadWorkerConfig({ RETRYSAFE_WEBHOOKS: 'acme=https://a.example/h', RETRYSAFE_WEBHOOK_SECRETS: `acme=${bad}` }),
    );
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(/^RETRYSAFE_WEBHOOK_SECRETS entry 1 \(tenant acme\), /);
    expect(problems[0]).toMatch(message);
    expect(problems[0]).not.toContain(bad.replace(/^whsec_/, ''));
  });

  it.each([
    ['an entry without "="', 'acme', /entry 1 is not <tenant>=<secret>/],
    ['a tenant without a secret', 'acme=', /entry 1 \(tenant acme\) has no secret/],
    ['a tenant twice', `acme=${SECRET},acme=whsec_${randomBytes(32).toString('base64')}`, /entry 2: tenant acme is named twice/],
    ['the same secret twice for one tenant', `acme=${SECRET} ${SECRET}`, /entry 1 \(tenant acme\) lists the same secret twice/],
    ['a tenant with "/"', `acme/eu=${SECRET}`, /entry 1: the tenant must be 1-64 characters/],
  ])('refuses %s, never repeating a secret', (_name, value, message) => {
    const problems = problemsOf(() => loadWorkerConfig({ RETRYSAFE_WEBHOOK_SECRETS: value }));
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(message);
    expect(problems[0]).not.toContain(SECRET.replace(/^whsec_/, ''));
  });

  it('accepts exactly 24 bytes, with or without padding', () => {
    const bytes = randomBytes(24).toString('base64');
    const padded = randomBytes(25).toString('base64');
    expect(padded.endsWith('=')).toBe(true);
    expect(
      loadWorkerConfig({ RETRYSAFE_WEBHOOK_SECRETS: `acme=whsec_${bytes} whsec_${padded}` }).webhooks.secrets.get('acme'),
    ).toEqual([`whsec_${bytes}`, `whsec_${padded}`]);
  });
});

describe('RETRYSAFE_WEBHOOK_SECRET, the one shared secret of earlier releases', () => {
  it('refuses to start the worker and the API, naming its replacement and never the value', () => {
    for (const problems of [
      problemsOf(() => loadWorkerConfig({ RETRYSAFE_WEBHOOKS: 'acme=https://a.example/h', RETRYSAFE_WEBHOOK_SECRET: SECRET })),
      problemsOf(() => loadApiConfig({ RETRYSAFE_WEBHOOK_SECRET: SECRET })),
    ]) {
      const old = problems.filter((p) => p.startsWith('RETRYSAFE_WEBHOOK_SECRET '));
      expect(old).toHaveLength(1);
      expect(old[0]).toMatch(/is no longer read: .*RETRYSAFE_WEBHOOK_SECRETS="<tenant>=<secret>/);
      expect(problems.join('\n')).not.toContain(SECRET.replace(/^whsec_/, ''));
    }
  });

  it('is no error when set but blank (what an unset shell variable expands to)', () => {
    expect(() => loadWorkerConfig({ RETRYSAFE_WEBHOOK_SECRET: '' })).not.toThrow();
  });
});

describe('RETRYSAFE_WEBHOOK_DEADLINE', () => {
  it('reads a duration', () => {
    expect(loadApiConfig({ RETRYSAFE_WEBHOOK_DEADLINE: '90m' }).webhooks.deadlineMs).toBe(5_400_000);
  });

  it.each(['soon', '500ms', '31d'])('refuses %s with a message naming the variable', (value) => {
    const problems = problemsOf(() => loadApiConfig({ RETRYSAFE_WEBHOOK_DEADLINE: value }));
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(/^RETRYSAFE_WEBHOOK_DEADLINE=/);
  });
});
