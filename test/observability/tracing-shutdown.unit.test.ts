// A receiver that fails never fails a process. Pointed at a receiver that drops the
// connection, the exporter's failures are said on stderr once, however many batches fail;
// once it accepts and never answers, stopping tracing still resolves within its few
// seconds, without an error (what was buffered is lost, as any export that fails). Its own
// process: tracing starts once per process.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { trace } from '@opentelemetry/api';
import { afterAll, expect, it, vi } from 'vitest';
import { startTracing, stopTracing } from '../../common/tracing/start.js';

let receiver: Server;
afterAll(() => {
  vi.unstubAllEnvs();
  receiver?.closeAllConnections();
  receiver?.close();
});

it('says once that spans were dropped, and stops within seconds when the receiver never answers', async () => {
  let answer: 'drop' | 'never' = 'drop';
  let requests = 0;
  receiver = createServer((req) => {
    requests++;
    if (answer === 'drop') req.socket.destroy();
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const endpoint = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/api/v2/spans`;
  // The batch processor reads its own variables from the process's environment.
  vi.stubEnv('OTEL_BSP_SCHEDULE_DELAY', '50');
  const tracing = await startTracing('worker', {
    env: { OTEL_TRACES_EXPORTER: 'zipkin', OTEL_EXPORTER_ZIPKIN_ENDPOINT: endpoint },
  });
  expect(tracing?.ownProvider).toBe(true);
  const tracer = trace.getTracer('retrysafe-worker');

  const stderr = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
  let written: string[];
  try {
    for (const step of ['reserve_items', 'charge_payment', 'confirm_reservation']) {
      tracer.startSpan(step).end();
      const before = requests;
      for (let i = 0; i < 50 && requests === before; i++) await sleep(50);
      await sleep(100);
    }
  } finally {
    written = stderr.mock.calls.map(([line]) => String(line));
    stderr.mockRestore();
  }
  expect(requests).toBe(3);
  expect(written.map((line) => JSON.parse(line) as unknown)).toEqual([
    expect.objectContaining({
      level: 40,
      name: 'tracing',
      msg: expect.stringMatching(/^OpenTelemetry failed: spans may have been dropped/),
    }),
  ]);

  answer = 'never';
  tracer.startSpan('release_reservation').end();
  const t0 = Date.now();
  await expect(stopTracing()).resolves.toBeUndefined();
  expect(Date.now() - t0).toBeLessThan(6_000);
  expect(requests).toBe(4);
});
