// The real entry points refuse to start on configuration that would open a way in: the
// API with RETRYSAFE_API_KEYS set but blank (a secret that did not mount), or malformed, or
// in dev mode on an address other machines reach; the worker with the old shared webhook
// secret, or a tenant's webhook without a secret of its own. Each exits non-zero before it
// listens or connects, naming the variable, and repeats no secret.
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { PART_ENTRY } from '../../tools/stack-env.js';

const SECRET = `whsec_${Buffer.alloc(32, 5).toString('base64')}`;

/** The entry as a process, with only `env` (and PATH) in its environment. */
async function start(entry: string, env: Record<string, string>) {
  const run = await execa(process.execPath, ['--import', 'tsx', entry], {
    env: { PATH: process.env.PATH ?? '', LOG_PRETTY: '0', ...env },
    extendEnv: false,
    reject: false,
    timeout: 60_000,
  });
  return { exitCode: run.exitCode, output: `${run.stdout}\n${run.stderr}` };
}

describe('the API refuses to start', () => {
  it.each([
    ['RETRYSAFE_API_KEYS set but empty', { RETRYSAFE_API_KEYS: '' }, 'RETRYSAFE_API_KEYS is set but blank'],
    ['RETRYSAFE_API_KEYS of spaces', { RETRYSAFE_API_KEYS: '   ' }, 'RETRYSAFE_API_KEYS is set but blank'],
    ['RETRYSAFE_API_KEYS malformed', { RETRYSAFE_API_KEYS: 'sk_live_0123456789abcdef' }, 'RETRYSAFE_API_KEYS entry 1 has no "="'],
    ['dev mode on 0.0.0.0', { API_HOST: '0.0.0.0' }, 'RETRYSAFE_API_KEYS is not set, so the API would run in dev mode'],
  ])('with %s: exits non-zero, naming the variable', async (_name, env, message) => {
    const run = await start(PART_ENTRY.api, { API_PORT: '0', ...env });
    expect(run.exitCode, run.output).not.toBe(0);
    expect(run.output).toContain('invalid configuration');
    expect(run.output).toContain(message);
    expect(run.output).not.toContain('api listening');
    expect(run.output).not.toContain('sk_live_0123456789abcdef');
  });
});

describe('the worker refuses to start', () => {
  it.each([
    [
      'the old shared RETRYSAFE_WEBHOOK_SECRET',
      { RETRYSAFE_WEBHOOK_SECRET: SECRET },
      'RETRYSAFE_WEBHOOK_SECRET is no longer read: give each tenant its own signing secret with RETRYSAFE_WEBHOOK_SECRETS',
    ],
    [
      'a webhook URL for a tenant without a secret',
      { RETRYSAFE_WEBHOOKS: 'acme=http://127.0.0.1:9/h', RETRYSAFE_WEBHOOK_SECRETS: `beta=${SECRET}` },
      'RETRYSAFE_WEBHOOK_SECRETS has no signing secret for tenant acme',
    ],
  ])('with %s: exits non-zero, naming the variable and never the secret', async (_name, env, message) => {
    // Nothing listens on port 1: a worker that got past its config would fail differently.
    const run = await start(PART_ENTRY.worker, { TEMPORAL_ADDRESS: '127.0.0.1:1', WORKER_METRICS_ADDRESS: 'off', ...env });
    expect(run.exitCode, run.output).not.toBe(0);
    expect(run.output).toContain('invalid configuration');
    expect(run.output).toContain(message);
    expect(run.output).not.toContain(SECRET.slice('whsec_'.length));
  });
});
