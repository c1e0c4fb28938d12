// The real entry points as processes, logging at debug: the API, the worker and both
// sandboxes, given known secrets (API keys, a TEMPORAL_API_KEY, a metrics token, webhook
// signing secrets), then sent authorized and unauthorized requests. No secret may appear
// anywhere in their output. The sandboxes' fault-injection endpoints must exist only with
// SANDBOX_FAULTS=1.
import { mkdtempSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { PART_ENTRY, partEnv, type StackDescription, type StackPartName } from '../../tools/stack-env.js';
import { freePort } from '../../tools/supervisor/ports.js';
import { spawnEntry, type ChildHandle } from '../support/processes.js';
import { uniqueId } from '../support/stack.js';

const SECRET = `sk_live_LOGSECRET_${uniqueId('a')}`;
const SECRET_B = `sk_live_LOGSECRET_${uniqueId('b')}_other`;
const WRONG = `sk_live_WRONGSECRET_${uniqueId('w')}`;
const TEMPORAL_SECRET = `tmprl_TEMPORALKEY_${uniqueId('t')}`;
const METRICS_TOKEN = `mt_METRICSTOKEN_${uniqueId('m')}`;
const WEBHOOK_SECRET = `whsec_${Buffer.from(`WEBHOOKSECRET_${uniqueId('h')}`).toString('base64')}`;
const SECRETS = { SECRET, SECRET_B, WRONG, TEMPORAL_SECRET, METRICS_TOKEN, WEBHOOK_SECRET };

const children: ChildHandle[] = [];
let dir: string;

/** Every process gets every secret in its environment, whether it reads it or not. */
function spawn(part: StackPartName, stack: StackDescription): ChildHandle {
  const child = spawnEntry(PART_ENTRY[part], {
    LOG_LEVEL: 'debug',
    LOG_PRETTY: '0',
    RETRYSAFE_API_KEYS: `${SECRET}=acme,${SECRET_B}=umbrella`,
    TEMPORAL_API_KEY: TEMPORAL_SECRET,
    RETRYSAFE_METRICS_TOKEN: METRICS_TOKEN,
    RETRYSAFE_WEBHOOK_SECRETS: `acme=${WEBHOOK_SECRET}`,
    // The test dev server speaks plain gRPC; the key still travels as call metadata.
    TEMPORAL_TLS: 'false',
    TEMPORAL_ADDRESS: inject('temporalAddress'),
    SANDBOX_FAULTS: '',
    ...partEnv(stack, part),
  });
  children.push(child);
  return child;
}

async function urlOf(child: ChildHandle, pattern: RegExp): Promise<string> {
  for (let i = 0; i < 300; i++) {
    for (const line of child.output) {
      const m = pattern.exec(line);
      if (m) return m[1]!;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`no URL matching ${String(pattern)}:\n${child.output.slice(-20).join('\n')}`);
}

async function startSandboxes(faults: boolean, tag: string) {
  const places = {
    bank: { port: 0, db: join(dir, `bank-${tag}.db`) },
    reservations: { port: 0, db: join(dir, `reservations-${tag}.db`) },
    faults,
  };
  const bank = spawn('bank', places);
  const reservations = spawn('reservations', places);
  const [bankUrl, reservationsUrl] = await Promise.all([
    urlOf(bank, /bank listening at (http:\/\/[\d.:]+)/),
    urlOf(reservations, /reservations listening at (http:\/\/[\d.:]+)/),
  ]);
  return { bank, reservations, bankUrl, reservationsUrl };
}

let stack: Awaited<ReturnType<typeof startSandboxes>>;
let faulty: Awaited<ReturnType<typeof startSandboxes>>;
let api: ChildHandle;
let worker: ChildHandle;
let apiUrl: string;

beforeAll(async () => {
  dir = mkdtempSync(join(inject('tmpRoot'), 'security-processes-'));
  const taskQueue = uniqueId('security-logs');
  // Without SANDBOX_FAULTS (the stack under test) and with SANDBOX_FAULTS=1, side by side.
  [stack, faulty] = await Promise.all([startSandboxes(false, 'plain'), startSandboxes(true, 'faults')]);
  const apiPort = await freePort();
  // Temporal's address is in every process's environment (spawn).
  const described = {
    taskQueue,
    bank: { url: stack.bankUrl },
    reservations: { url: stack.reservationsUrl },
    worker: { metricsAddress: 'off' },
    api: { port: apiPort },
  };
  worker = spawn('worker', described);
  api = spawn('api', described);
  apiUrl = `http://127.0.0.1:${apiPort}`;
  await Promise.all([worker.waitFor('worker ready'), api.waitFor('api listening')]);
});

afterAll(async () => {
  for (const child of children.reverse()) await child.kill('SIGTERM');
});

async function call(method: string, path: string, opts: { authorization?: string; key?: string; body?: unknown } = {}) {
  const res = await fetch(apiUrl + path, {
    method,
    headers: {
      ...(opts.authorization ? { authorization: opts.authorization } : {}),
      ...(opts.key ? { 'idempotency-key': opts.key, prefer: 'wait=20' } : {}),
      ...(opts.body !== undefined ? { 'content-type': 'application/json' } : {}),
    },
    body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
  });
  const text = await res.text();
  for (const secret of Object.values(SECRETS)) expect(text).not.toContain(secret);
  return { status: res.status, text };
}

describe('fault injection endpoints', () => {
  it('exist only when SANDBOX_FAULTS=1, on the bank and on the reservation service', async () => {
    const put = (url: string) =>
      fetch(`${url}/_faults`, {
        method: 'PUT',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ down: true }),
      });
    for (const url of [faulty.bankUrl, faulty.reservationsUrl]) {
      expect((await put(url)).status, url).toBe(200);
      expect(await (await fetch(`${url}/_faults`)).json()).toMatchObject({ down: true });
    }
    // And `down` then really refuses the effect endpoints: the endpoint does what it says.
    const refused = await fetch(`${faulty.bankUrl}/charges`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'idempotency-key': uniqueId('f') },
      body: JSON.stringify({ account: 'acc_alice', amount: 1, currency: 'EUR' }),
    }).then(
      (r) => r.status,
      () => 'reset',
    );
    expect(refused).toBe('reset');
  });
});

describe('secrets in logs', () => {
  it('never appear in the output of the API, the worker or the sandboxes, at debug level', async () => {
    const key = uniqueId('logged');
    const paid = await call('POST', '/v1/payments', {
      authorization: `Bearer ${SECRET}`,
      key,
      body: { account: 'acc_alice', amount: 42, currency: 'EUR' },
    });
    expect(paid.status, paid.text).toBe(200);
    expect(JSON.parse(paid.text)).toMatchObject({ status: 'succeeded' });
    expect((await call('GET', `/v1/operations/${key}`, { authorization: `Bearer ${SECRET}` })).status).toBe(200);
    expect((await call('GET', '/v1/operations', { authorization: `Bearer ${SECRET_B}` })).status).toBe(200);
    // The metrics are the operators': a tenant's key is refused, the metrics token is not.
    expect((await call('GET', '/metrics', { authorization: `Bearer ${SECRET}` })).status).toBe(403);
    expect((await call('GET', '/metrics', { authorization: `Bearer ${METRICS_TOKEN}` })).status).toBe(200);
    expect((await call('GET', '/metrics', { authorization: `Bearer ${WRONG}` })).status).toBe(401);
    // Refused ones: a wrong key, a real key under another scheme, a real key on a probe.
    expect(
      (
        await call('POST', '/v1/payments', {
          authorization: `Bearer ${WRONG}`,
          key,
          body: { account: 'acc_alice', amount: 42, currency: 'EUR' },
        })
      ).status,
    ).toBe(401);
    expect((await call('GET', `/v1/operations/${key}`, { authorization: `Bearer ${WRONG}` })).status).toBe(401);
    expect((await call('GET', '/openapi.json', { authorization: `Basic ${SECRET}` })).status).toBe(401);
    expect((await call('GET', '/healthz', { authorization: `Bearer ${SECRET}` })).status).toBe(200);
    expect(
      (await call('POST', '/v1/payments', { authorization: `Bearer ${SECRET}`, key: uniqueId('bad'), body: { amount: 'x' } }))
        .status,
    ).toBe(400);
    // The charge went through the worker to the bank (so both logged their part).
    const charge = (await (await fetch(`${stack.bankUrl}/charges/${encodeURIComponent(`acme/${key}/charge`)}`)).json()) as Record<
      string,
      unknown
    >;
    expect(charge).toMatchObject({ status: 'captured', amount: 42 });

    // Started without SANDBOX_FAULTS: no fault endpoints, and effects run untouched after
    // the attempt (SANDBOX_FAULTS=1 is the next test).
    for (const url of [stack.bankUrl, stack.reservationsUrl]) {
      const put = await fetch(`${url}/_faults`, {
        method: 'PUT',
        headers: { 'content-type': 'application/json' },
        body: '{"down":true}',
      });
      expect(put.status, url).toBe(404);
      expect((await fetch(`${url}/_faults`)).status, url).toBe(404);
    }
    const again = await call('POST', '/v1/payments', {
      authorization: `Bearer ${SECRET}`,
      key: uniqueId('after'),
      body: { account: 'acc_alice', amount: 1, currency: 'EUR' },
    });
    expect(JSON.parse(again.text)).toMatchObject({ status: 'succeeded' });

    // Stop them all (flushing their logs), then read everything they printed.
    for (const child of [api, worker, stack.bank, stack.reservations, faulty.bank, faulty.reservations])
      await child.kill('SIGTERM');
    const outputs = {
      api: api.output,
      worker: worker.output,
      bank: stack.bank.output,
      reservations: stack.reservations.output,
      'bank (faults on)': faulty.bank.output,
      'reservations (faults on)': faulty.reservations.output,
    };
    // Debug logging was on, and requests were logged: the check has something to look at.
    expect(
      Object.values(outputs)
        .flat()
        .some((l) => l.includes('"level":20')),
    ).toBe(true);
    for (const [name, lines] of Object.entries(outputs)) {
      expect(lines.length, `${name} printed nothing`).toBeGreaterThan(0);
      for (const [what, secret] of Object.entries(SECRETS)) {
        const leaked = lines.filter((l) => l.includes(secret));
        expect(leaked, `${name} printed ${what}`).toEqual([]);
      }
    }
    expect(api.output.join('\n')).toContain('incoming request');
    expect(api.output.join('\n')).toMatch(/"statusCode":401/);
    expect(stack.bank.output.join('\n')).toContain(`acme/${key}/charge`);
    console.log(
      `secrets in logs: ${Object.values(outputs).reduce((n, l) => n + l.length, 0)} log lines checked, none holds a secret`,
    );
  });
});
