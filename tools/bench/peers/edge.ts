// The HTTP edge both peers share with retrysafe's contract: POST /v1/checkouts with an
// Idempotency-Key header and retrysafe's checkout body (validated the same way: no
// coercion, no unknown fields), answered 200 with the outcome once the checkout ends.
// Each peer supplies only how to run a checkout under an operation ID.
import Fastify, { type FastifyInstance } from 'fastify';
import { operationId, type CheckoutOutcome, type CheckoutRequest } from './contract.js';

const CheckoutBody = {
  type: 'object',
  additionalProperties: false,
  required: ['account', 'amount', 'currency', 'items'],
  properties: {
    account: { type: 'string', minLength: 1, maxLength: 64 },
    amount: { type: 'integer', minimum: 1 },
    currency: { type: 'string', pattern: '^[A-Z]{3}$' },
    description: { type: 'string', maxLength: 500 },
    items: {
      type: 'array',
      minItems: 1,
      maxItems: 100,
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['sku', 'quantity'],
        properties: { sku: { type: 'string', minLength: 1, maxLength: 64 }, quantity: { type: 'integer', minimum: 1 } },
      },
    },
  },
} as const;

/** 1–255 visible ASCII characters, as retrysafe accepts in the bare form. */
const KEY = /^[\x21-\x7e]{1,255}$/;

/** Runs the checkout `<tenant>/<key>` (or joins the one already under that ID) and resolves with its outcome. */
export type RunCheckout = (operationId: string, request: CheckoutRequest) => Promise<CheckoutOutcome>;

export function buildEdge(runCheckout: RunCheckout): FastifyInstance {
  const app = Fastify({ logger: false, ajv: { customOptions: { coerceTypes: false } } });
  app.get('/healthz', async () => ({ status: 'ok' }));
  app.post<{ Body: CheckoutRequest }>('/v1/checkouts', { schema: { body: CheckoutBody } }, async (request, reply) => {
    const key = request.headers['idempotency-key'];
    if (typeof key !== 'string' || !KEY.test(key)) {
      return reply.code(400).send({ code: 'idempotency_key_invalid', detail: 'Idempotency-Key: 1-255 visible ASCII characters' });
    }
    return runCheckout(operationId(key), request.body);
  });
  return app;
}

/** Listens on PEER_HOST:PEER_PORT (loopback and 3100 unless set) and says where. */
export async function listenEdge(app: FastifyInstance, peer: string): Promise<void> {
  const host = process.env.PEER_HOST ?? '127.0.0.1';
  const port = Number(process.env.PEER_PORT ?? 3100);
  await app.listen({ host, port });
  console.log(`${peer} checkout peer listening at http://${host}:${port}`);
}

/** Stops `close` on SIGTERM/SIGINT and exits: 0 when it closed cleanly. */
export function exitOnSignal(close: () => Promise<unknown>): void {
  let closing = false;
  const stop = () => {
    if (closing) return;
    closing = true;
    close().then(
      () => process.exit(0),
      (err: unknown) => {
        console.error(err);
        process.exit(1);
      },
    );
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}
