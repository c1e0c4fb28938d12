// The Restate peer's Node process, two listeners on loopback: the service endpoint that
// restate-server invokes (HTTP/2, registered as a deployment, see ../index.ts), and
// retrysafe's checkout contract (../edge.ts), which submits the Checkout workflow
// `<tenant>/<key>` to the ingress and answers with its result. A retry of the key submits
// the same workflow ID, and Restate answers with the stored result.
//
// Settings: PEER_HOST, PEER_PORT (the contract), ENDPOINT_PORT (the service endpoint),
// RESTATE_INGRESS_URL, BANK_URL, RESERVATIONS_URL, DOWNSTREAM_TIMEOUT_MS.
import http2 from 'node:http2';
import * as restate from '@restatedev/restate-sdk';
import type { CheckoutOutcome } from '../contract.js';
import { sandboxClients, sandboxUrlsFromEnv } from '../downstream.js';
import { buildEdge, exitOnSignal, listenEdge } from '../edge.js';
import { checkoutWorkflow } from './checkout.js';

async function run(): Promise<void> {
  const env = process.env;
  const host = env.PEER_HOST ?? '127.0.0.1';
  const ingress = env.RESTATE_INGRESS_URL?.replace(/\/+$/, '');
  if (!ingress) throw new Error('RESTATE_INGRESS_URL is not set');

  const endpoint = http2.createServer(
    restate.createEndpointHandler({ services: [checkoutWorkflow(sandboxClients(sandboxUrlsFromEnv()))] }),
  );
  await new Promise<void>((resolve, reject) => {
    endpoint.once('error', reject);
    endpoint.listen(Number(env.ENDPOINT_PORT ?? 9080), host, resolve);
  });

  const workflow = (id: string) => encodeURIComponent(id);
  const app = buildEdge(async (id, request) => {
    let res = await fetch(`${ingress}/Checkout/${workflow(id)}/run`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(request),
      signal: AbortSignal.timeout(120_000),
    });
    // 409: this workflow ID was submitted before (a retry, or a concurrent duplicate).
    // Attaching waits for that run, or answers at once with its stored result.
    if (res.status === 409) {
      await res.body?.cancel();
      res = await fetch(`${ingress}/restate/workflow/Checkout/${workflow(id)}/attach`, { signal: AbortSignal.timeout(120_000) });
    }
    if (!res.ok) throw new Error(`restate ingress answered ${res.status}: ${(await res.text()).slice(0, 300)}`);
    return (await res.json()) as CheckoutOutcome;
  });
  // The endpoint is not closed first: restate-server keeps its HTTP/2 connections open,
  // and they end with the process.
  exitOnSignal(() => app.close());
  await listenEdge(app, 'restate');
}

run().catch((err) => {
  console.error(err);
  process.exit(1);
});
