// A process's stop never waits long on its trace receiver: with the Zipkin exporter
// pointed at a receiver that accepts the connection and never answers, stopping tracing
// resolves within its few seconds, without an error (the buffered spans are lost, as any
// export that fails). Its own process: tracing starts once per process.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { trace } from '@opentelemetry/api';
import { afterAll, expect, it } from 'vitest';
import { startTracing, stopTracing } from '../../common/tracing/start.js';

let silent: Server;
afterAll(() => {
  silent?.closeAllConnections();
  silent?.close();
});

it('stops within seconds, without an error, when the receiver never answers', async () => {
  let received = 0;
  silent = createServer(() => void received++);
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  const endpoint = `http://127.0.0.1:${(silent.address() as AddressInfo).port}/api/v2/spans`;
  const tracing = await startTracing('worker', {
    env: { OTEL_TRACES_EXPORTER: 'zipkin', OTEL_EXPORTER_ZIPKIN_ENDPOINT: endpoint },
  });
  expect(tracing?.ownProvider).toBe(true);
  trace.getTracer('retrysafe-worker').startSpan('charge_payment').end();

  const t0 = Date.now();
  await expect(stopTracing()).resolves.toBeUndefined();
  expect(Date.now() - t0).toBeLessThan(6_000);
  // The export was tried: the receiver got the request it never answered.
  expect(received).toBe(1);
});
