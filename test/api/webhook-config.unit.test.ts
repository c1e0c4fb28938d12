// The completion webhooks' three variables, as the API and the worker parse them: each bad
// value refused with a line naming its variable, and never a secret (or a URL, which may
// carry a token) repeated in a message.
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

  it('gives the worker each tenant URL and the secret', () => {
    const config = loadWorkerConfig({
      RETRYSAFE_WEBHOOKS: 'acme=https://hooks.acme.example/retrysafe?token=a=b',
      RETRYSAFE_WEBHOOK_SECRET: SECRET,
    });
    expect(config.webhooks.urls).toEqual(new Map([['acme', 'https://hooks.acme.example/retrysafe?token=a=b']]));
    expect(config.webhooks.secret).toBe(SECRET);
  });

  it('is optional: no webhooks, no secret needed', () => {
    expect(loadWorkerConfig({}).webhooks).toEqual({ urls: new Map(), secret: undefined });
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
      problemsOf(() => loadWorkerConfig({ RETRYSAFE_WEBHOOKS: value, RETRYSAFE_WEBHOOK_SECRET: SECRET })),
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

describe('RETRYSAFE_WEBHOOK_SECRET', () => {
  it('is required by the worker once a tenant has a webhook', () => {
    expect(problemsOf(() => loadWorkerConfig({ RETRYSAFE_WEBHOOKS: 'acme=https://a.example/h' }))).toEqual([
      'RETRYSAFE_WEBHOOK_SECRET is required when RETRYSAFE_WEBHOOKS is set (it signs every event)',
    ]);
  });

  it.each([
    ['no whsec_ prefix', randomBytes(32).toString('base64'), /must start with "whsec_"/],
    ['not base64', `whsec_${'!'.repeat(40)}`, /must be standard base64/],
    [
      'base64url instead of base64',
      `whsec_${Buffer.from([251, 255, 191, ...randomBytes(30)]).toString('base64url')}`,
      /standard base64/,
    ],
    ['too few random bytes', `whsec_${randomBytes(16).toString('base64')}`, /holds 16 bytes; at least 24 random bytes/],
  ])('refuses %s, without repeating it', (_name, secret, message) => {
    const problems = problemsOf(() =>
      loadWorkerConfig({ RETRYSAFE_WEBHOOKS: 'acme=https://a.example/h', RETRYSAFE_WEBHOOK_SECRET: secret }),
    );
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(message);
    expect(problems[0]).not.toContain(secret.replace(/^whsec_/, ''));
  });

  it('accepts exactly 24 bytes, with or without padding', () => {
    const bytes = randomBytes(24).toString('base64');
    expect(loadWorkerConfig({ RETRYSAFE_WEBHOOK_SECRET: `whsec_${bytes}` }).webhooks.secret).toBe(`whsec_${bytes}`);
    const padded = randomBytes(25).toString('base64');
    expect(padded.endsWith('=')).toBe(true);
    expect(loadWorkerConfig({ RETRYSAFE_WEBHOOK_SECRET: `whsec_${padded}` }).webhooks.secret).toBe(`whsec_${padded}`);
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
