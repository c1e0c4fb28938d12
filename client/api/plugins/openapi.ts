// The OpenAPI document, generated from the same TypeBox schemas that validate requests and
// serialise answers, so it cannot drift from what the server does; and its Swagger UI.
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { ApiInstance } from '../instance.js';

export function installOpenApi(app: ApiInstance): void {
  void app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'retrysafe',
        version: '1.0.0',
        description:
          'Safe retries for payments and checkouts. Every POST needs an Idempotency-Key; a retry with the same key ' +
          'and body returns the same operation, and a retry after a 503 is always safe.',
      },
      components: { securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer' } } },
      tags: [
        { name: 'operations', description: 'Payments, checkouts and their outcomes' },
        { name: 'system', description: 'Health, readiness and metrics' },
      ],
    },
  });
  void app.register(swaggerUi, { routePrefix: '/docs' });
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
}
