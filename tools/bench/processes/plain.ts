// The replay baseline: a plain Fastify endpoint that parses the JSON body and answers a
// cached JSON body of the same size as an operation resource. Nothing else: no schema,
// no auth, no logger (Fastify's defaults).
import Fastify from 'fastify';

async function run(): Promise<void> {
  const port = Number(process.env.BENCH_PLAIN_PORT ?? 0);
  const body = process.env.BENCH_PLAIN_BODY ?? '{}';
  const app = Fastify();
  app.post('/v1/payments', async (_request, reply) => reply.header('content-type', 'application/json; charset=utf-8').send(body));
  process.once('SIGTERM', () => void app.close().then(() => process.exit(0)));
  process.once('SIGINT', () => void app.close().then(() => process.exit(0)));
  await app.listen({ host: '127.0.0.1', port });
  console.log(`bench plain listening on ${port}`);
}

run().catch((err) => {
  console.error(err);
  process.exit(1);
});
