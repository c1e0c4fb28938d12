// `npm run demo` (tools/demo/main.ts) as a process against a stack of its own: sandboxes with fault injection
// (and their seeded demo accounts and stock), a worker, the API. The demo's claims are
// checked against the ledgers after it ran, and it must leave the faults off.
import { createServer, type Server } from 'node:http';
import { describe, expect, it } from 'vitest';
import { freePort } from '../../tools/supervisor/ports.js';
import { useFullStack } from '../support/full-stack.js';
import { startBank } from '../support/stack.js';
import { runCommandLine, spawnCommandLine } from '../client/helpers.js';
import { listenOnFreePort } from '../support/loopback.js';

const stack = useFullStack({ name: 'demo', faults: true, stepDeadlineMs: 20_000 });

const DEMO = 'tools/demo/main.ts';
const runDemo = (args: string[]) => runCommandLine(DEMO, args);

/** An API stand-in that is healthy but answers payments with `onPayment`. */
async function fakeApi(onPayment: 'fail' | 'hang'): Promise<{ url: string; server: Server }> {
  const server = createServer((req, res) => {
    if (req.url === '/healthz') {
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"status":"ok"}');
    } else if (onPayment === 'fail') {
      res.writeHead(500, { 'content-type': 'application/problem+json' });
      res.end(
        JSON.stringify({
          type: 'urn:retrysafe:problem:internal_error',
          title: 'Internal error',
          status: 500,
          detail: 'boom',
          code: 'internal_error',
        }),
      );
    }
    // 'hang': never answer.
  });
  return { url: await listenOnFreePort(server), server };
}

async function stop(server: Server): Promise<void> {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
}

async function faults(url: string): Promise<Record<string, unknown>> {
  return (await (await fetch(`${url}/_faults`)).json()) as Record<string, unknown>;
}

describe('npm run demo', () => {
  it('narrates the lost response, the replay, the 422 and the released hold, and leaves one charge and the faults off', async () => {
    const aliceBefore = await stack.bank.balance('acc_alice');
    const bobBefore = await stack.bank.balance('acc_bob');
    const stockBefore = await stack.reservations.stock('sku_book');
    expect(bobBefore).toBe(2_000);

    const run = await runDemo([
      '--api-url',
      stack.api.url,
      '--bank-url',
      stack.bank.url,
      '--reservations-url',
      stack.reservations.url,
    ]);
    expect(run.exitCode, run.stderr).toBe(0);
    expect(run.stderr).toBe('');
    const out = run.stdout;

    // Numbered steps, in order.
    const numbers = [...out.matchAll(/^(\d+)\. /gm)].map((m) => Number(m[1]));
    expect(numbers).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    expect(out).toContain('dropResponseAfterCommit: 1');
    expect(out).toContain('Idempotent-Replayed: true');
    expect(out).toContain('422 idempotency_key_reused, differences: ["amount"]');
    expect(out).toContain('failed: insufficient_funds');
    expect(out).toContain('compensations: ["release_reservation"]');
    expect(out).toContain('Turning the fault off again.');

    // The key and the charge it names, as printed, are what the bank holds: one charge of 12.50.
    const key = /idempotency key (demo-[0-9a-f]{8})\./.exec(out)?.[1];
    expect(key).toBeDefined();
    const chargePath = `/charges/default%2F${key}%2Fcharge`;
    expect(out).toContain(`GET ${stack.bank.url}${chargePath}`);
    const charge = await stack.bank.charge(`default/${key}/charge`);
    expect(charge.body).toMatchObject({ amount: 1250, currency: 'EUR', status: 'captured' });
    expect(out).toContain(`→ succeeded: charge ${String(charge.body.chargeId)}`);
    expect(out).toContain(`/namespaces/default/workflows/default%2F${key}`);
    expect(await stack.bank.balance('acc_alice')).toBe(aliceBefore - 1250);

    // Bob was not charged, his hold was released, the stock is back.
    expect(await stack.bank.balance('acc_bob')).toBe(bobBefore);
    expect(await stack.reservations.stock('sku_book')).toEqual(stockBefore);
    expect((await stack.reservations.reservation(`default/${key}-checkout/reserve`)).body.status).toBe('released');

    expect(await faults(stack.bank.url)).toMatchObject({ dropResponseAfterCommit: 0 });
  });

  it('against sandboxes without fault injection, says to restart with --faults and exits 4, changing nothing', async () => {
    const plainBank = await startBank({ faults: false });
    try {
      const before = await plainBank.balance('acc_alice');
      const run = await runDemo([
        '--api-url',
        stack.api.url,
        '--bank-url',
        plainBank.url,
        '--reservations-url',
        stack.reservations.url,
      ]);
      expect(run.exitCode).toBe(4);
      expect(run.stderr).toContain('runs without fault injection (GET /_faults is 404)');
      expect(run.stderr).toContain('npm start -- --faults');
      expect(await plainBank.balance('acc_alice')).toBe(before);
    } finally {
      await plainBank.close();
    }
  });

  it('when a step fails after the fault was turned on, turns it off again and exits 4', async () => {
    const failing = await fakeApi('fail');
    try {
      const run = await runDemo([
        '--api-url',
        failing.url,
        '--bank-url',
        stack.bank.url,
        '--reservations-url',
        stack.reservations.url,
      ]);
      expect(run.exitCode).toBe(4);
      expect(run.stdout).toContain('dropResponseAfterCommit: 1');
      expect(run.stdout).toContain('Turning the fault off again.');
      expect(run.stderr).toContain('error: 500 internal_error: boom');
      expect(await faults(stack.bank.url)).toMatchObject({ dropResponseAfterCommit: 0 });
    } finally {
      await stop(failing.server);
    }
  });

  it('on Ctrl-C in the middle, turns the fault off before exiting (130)', async () => {
    const hanging = await fakeApi('hang');
    try {
      const child = spawnCommandLine(DEMO, [
        '--api-url',
        hanging.url,
        '--bank-url',
        stack.bank.url,
        '--reservations-url',
        stack.reservations.url,
      ]);
      let seen = '';
      await new Promise<void>((resolve, reject) => {
        child.stdout?.on('data', (chunk: Buffer) => {
          seen += chunk.toString();
          if (seen.includes('2. Paying')) resolve();
        });
        void child.then(() => reject(new Error(`demo exited early:\n${seen}`)));
      });
      expect(await faults(stack.bank.url)).toMatchObject({ dropResponseAfterCommit: 1 });
      child.kill('SIGINT');
      const result = await child;
      expect(result.exitCode).toBe(130);
      expect(String(result.stderr)).toContain('interrupted: turning the fault off again');
      expect(await faults(stack.bank.url)).toMatchObject({ dropResponseAfterCommit: 0 });
    } finally {
      await stop(hanging.server);
    }
  });

  it('with nothing listening, says to start the stack and exits 4', async () => {
    const nowhere = `http://127.0.0.1:${await freePort()}`;
    const run = await runDemo(['--api-url', nowhere, '--bank-url', stack.bank.url]);
    expect(run.exitCode).toBe(4);
    expect(run.stderr).toContain(`cannot reach the retrysafe API at ${nowhere}`);
    expect(run.stderr).toContain('npm start -- --faults');
    expect(await faults(stack.bank.url)).toMatchObject({ dropResponseAfterCommit: 0 });
  });
});
