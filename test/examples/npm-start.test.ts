// The tutorial's two terminals, as docs/operations.md writes them: the real launcher with
// `--operations examples/shipping` and RETRYSAFE_SERVICES (its own dev server, bank,
// worker and API on free ports), and the example shipping service as a process of its own.
// Also what a newcomer meets when a step is missed: a folder that is not there, the service's
// URL not given (both refused before anything starts, exit 2), the service not started yet
// (a warning and a banner row that say so; it works once the service is up).
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { freePort } from '../../tools/supervisor/ports.js';
import { descendants, freeStackPorts, isAlive, processesMentioning, useLaunchers } from '../launcher/harness.js';
import { spawnEntry, type ChildHandle } from '../support/processes.js';

const BANNER = /retrysafe is ready in (\d+(?:\.\d+)?) s[\s\S]*Ctrl-C stops everything/;
// Bounds, not expectations: the worker bundles the example into its workflow code first.
const START_TIMEOUT = 180_000;

const launchers = useLaunchers('retrysafe-example-');
let service: ChildHandle | undefined;

afterEach(async () => {
  await service?.kill();
  service = undefined;
});

async function launch(args: string[], extra: Record<string, string> = {}) {
  const ports = await freeStackPorts();
  const dataDir = launchers.dir(randomUUID());
  return { launcher: launchers.launch(args, dataDir, ports, extra), ports, dataDir };
}

describe('npm start -- --operations examples/shipping', () => {
  it('refuses a folder that is not there, and a service without a URL, before starting anything (exit 2)', async () => {
    for (const [args, extra, expected] of [
      [['--operations', 'examples/nope'], {}, /--operations examples\/nope: not a folder/],
      [
        ['--operations', 'examples/shipping'],
        {},
        /call the service shipping, which has no base URL: set RETRYSAFE_SERVICES=shipping=http:\/\/<host>:<port>/,
      ],
      [['--operations'], {}, /Option '--operations <value>' argument missing/],
    ] as const) {
      const { launcher, dataDir } = await launch([...args], extra);
      const result = await launcher.exit(60_000);
      expect(result.code, launcher.tail()).toBe(2);
      expect(launcher.output).toMatch(expected);
      expect(launcher.output).not.toMatch(/starting temporal/);
      expect(processesMentioning([dataDir])).toEqual([]);
    }
  });

  it('runs the example: warns while the service is not up, then a fulfilment charges and ships once; stops cleanly', async () => {
    const shippingPort = await freePort();
    const shippingUrl = `http://127.0.0.1:${shippingPort}`;
    const { launcher, ports, dataDir } = await launch(['--operations', 'examples/shipping'], {
      RETRYSAFE_SERVICES: `shipping=${shippingUrl}`,
    });
    const banner = (await launcher.waitFor(BANNER, START_TIMEOUT))[0];
    expect(banner).toContain('Operations      fulfilment (POST /v1/fulfilments)  from examples/shipping');
    expect(banner).toContain(`Service         shipping at ${shippingUrl}  NOT ANSWERING: start it yourself`);
    // A warning, on stderr: it may reach us just after the banner on stdout.
    await launcher.waitFor(/the service shipping \(\S+\) does not answer/, 10_000);
    expect(launcher.output).toContain(`the service shipping (${shippingUrl}) does not answer`);

    // The tutorial's first terminal, late: the worker reaches it from then on.
    service = spawnEntry('examples/shipping/service/server.ts', {
      SHIPPING_PORT: String(shippingPort),
      SHIPPING_DB: join(dataDir, 'shipping.db'),
    });
    await service.waitFor('shipping listening');

    const api = `http://127.0.0.1:${ports.api}`;
    const bank = `http://127.0.0.1:${ports.bank}`;
    const before = ((await (await fetch(`${bank}/accounts/acc_alice`)).json()) as { balance: number }).balance;
    const res = await fetch(`${api}/v1/fulfilments`, {
      method: 'POST',
      headers: { 'idempotency-key': 'order-1', 'content-type': 'application/json' },
      body: JSON.stringify({
        account: 'acc_alice',
        amount: 2500,
        currency: 'EUR',
        recipient: 'Ada Lovelace',
        country: 'FR',
        postcode: '75001',
      }),
    });
    const body = (await res.json()) as Record<string, unknown>;
    expect(res.status, JSON.stringify(body)).toBe(200);
    expect(body).toMatchObject({ type: 'fulfilment', status: 'succeeded', result: { shipmentId: expect.any(String) } });
    const shipment = await fetch(`http://127.0.0.1:${shippingPort}/shipments/default%2Forder-1%2Fshipment`);
    expect(await shipment.json()).toMatchObject({ status: 'created' });
    expect(((await (await fetch(`${bank}/accounts/acc_alice`)).json()) as { balance: number }).balance).toBe(before - 2500);

    const family = descendants(launcher.pid);
    launcher.child.kill('SIGTERM');
    const result = await launcher.exit(25_000);
    launchers.stopped(launcher);
    expect(result.code, launcher.tail()).toBe(0);
    await sleep(300);
    expect(family.filter(isAlive)).toEqual([]);
  });
});
