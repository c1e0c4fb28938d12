// `npm start -- --traces` as a user runs it: the real launcher also runs the Zipkin server
// (Java, the jar fetched once into .tools/zipkin), counts the stack ready only once Zipkin
// answers, prints where its UI is, points every part at it, and stops it with the rest.
// Through Zipkin's own API, as a person's viewer reads it: one trace per operation, with
// spans from the API, the worker and both sandboxes.
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { freePort } from '../../tools/supervisor/ports.js';
import { javaMajorVersion } from '../../tools/zipkin.js';
import { descendants, freeStackPorts, isAlive, processesMentioning, useLaunchers } from './harness.js';

const BANNER = /retrysafe is ready in (\d+(?:\.\d+)?) s[\s\S]*Ctrl-C stops everything/;
const launchers = useLaunchers('retrysafe-traces-');

interface ZipkinSpan {
  traceId: string;
  name: string;
  localEndpoint?: { serviceName?: string };
}

describe('npm start -- --traces', { timeout: 300_000 }, () => {
  it.skipIf((javaMajorVersion() ?? 0) < 17)(
    'runs Zipkin before the banner, and makes each operation one trace in it with spans from every part',
    async () => {
      const ports = await freeStackPorts();
      const zipkinPort = await freePort();
      const dataDir = launchers.dir('traced');
      const launcher = launchers.launch(['--traces'], dataDir, ports, { ZIPKIN_PORT: String(zipkinPort) });
      const banner = await launcher.waitFor(BANNER, 240_000);
      expect(banner[0]).toContain(`http://localhost:${zipkinPort}/zipkin/`);
      expect(banner[0]).toContain(`http://localhost:${zipkinPort}/zipkin/traces/<traceId>`);
      const zipkinReady = launcher.output.indexOf('[retrysafe] zipkin ready');
      expect(zipkinReady).toBeGreaterThan(0);
      expect(zipkinReady).toBeLessThan(launcher.output.indexOf('retrysafe is ready'));

      const res = await fetch(`http://127.0.0.1:${ports.api}/v1/checkouts`, {
        method: 'POST',
        headers: { 'Idempotency-Key': `traced-${ports.api}`, 'Content-Type': 'application/json', Prefer: 'wait=30' },
        body: JSON.stringify({ account: 'acc_alice', amount: 1250, currency: 'EUR', items: [{ sku: 'sku_book', quantity: 1 }] }),
      });
      const operation = (await res.json()) as { status: string; traceId: string };
      expect(operation.status).toBe('succeeded');

      const zipkin = `http://127.0.0.1:${zipkinPort}/api/v2`;
      const expected = ['retrysafe-api', 'retrysafe-bank', 'retrysafe-reservations', 'retrysafe-worker'];
      let services: string[] = [];
      for (let i = 0; i < 100 && services.length < expected.length; i++) {
        await sleep(200);
        const traces = (await (await fetch(`${zipkin}/traces?serviceName=retrysafe-api&limit=10`)).json()) as ZipkinSpan[][];
        const trace = traces.find((t) => t[0]?.traceId === operation.traceId) ?? [];
        services = [...new Set(trace.map((s) => s.localEndpoint?.serviceName ?? ''))].sort();
      }
      expect(services).toEqual(expected);
      const spans = (await (await fetch(`${zipkin}/trace/${operation.traceId}`)).json()) as ZipkinSpan[];
      expect(spans.map((s) => s.name)).toEqual(
        expect.arrayContaining(['reserve_items', 'charge_payment', 'confirm_reservation']),
      );

      const family = descendants(launcher.pid);
      launcher.child.kill('SIGTERM');
      const result = await launcher.exit(30_000);
      expect(result.code, launcher.tail()).toBe(0);
      expect(launcher.output).toMatch(/\[retrysafe\] zipkin stopped/);
      await sleep(300);
      expect(family.filter(isAlive)).toEqual([]);
      expect(processesMentioning([dataDir, `--server.port=${zipkinPort}`])).toEqual([]);
    },
  );
});
