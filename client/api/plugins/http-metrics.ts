// Latency of every answer by route pattern, method and status: bounded labels, never a key.
import type { ApiInstance } from '../instance.js';
import type { ApiMetrics } from '../metrics.js';

export function installHttpMetrics(app: ApiInstance, metrics: ApiMetrics): void {
  app.addHook('onResponse', async (request, reply) => {
    metrics.httpDuration.observe(
      { route: request.routeOptions.url ?? 'unmatched', method: request.method, status: String(reply.statusCode) },
      reply.elapsedTime / 1000,
    );
  });
}
