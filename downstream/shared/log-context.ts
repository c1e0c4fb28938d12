// Binds what a request is about to every log line it produces: its idempotency key (from
// the header, or from the path for reverse/confirm/release), and, when the key has the
// `<tenant>/<key>/<step>` shape retrysafe derives, the tenant, workflow and step. The
// caller's X-Request-Id is kept too, so a worker's attempt and the sandbox's answer meet.
import type { SandboxApp } from './http.js';

/** Path prefixes whose next segment(s) hold a key: `/charges/{key}/reverse` and the like. */
export function bindRequestContext(app: SandboxApp, keyedPaths: Array<{ prefix: string; suffixes: string[] }>): void {
  app.addHook('onRequest', async (request, reply) => {
    const header = request.headers['idempotency-key'];
    let key = typeof header === 'string' ? header.trim().replace(/^"(.*)"$/, '$1') : undefined;
    if (!key) {
      const path = (request.raw.url ?? '').split('?', 1)[0] ?? '';
      for (const { prefix, suffixes } of keyedPaths) {
        const suffix = suffixes.find((s) => path.startsWith(prefix) && path.endsWith(s) && path.length > prefix.length + s.length);
        if (suffix === undefined) continue;
        try {
          key = decodeURIComponent(path.slice(prefix.length, path.length - suffix.length));
        } catch {
          key = undefined; // the route answers the bad encoding itself
        }
        break;
      }
    }
    const requestId = request.headers['x-request-id'];
    const bindings: Record<string, string> = {};
    if (typeof requestId === 'string' && requestId.length <= 200) bindings.requestId = requestId;
    if (key) {
      bindings.key = key.slice(0, 512);
      const first = key.indexOf('/');
      const last = key.lastIndexOf('/');
      if (first > 0 && last > first) {
        bindings.tenant = key.slice(0, first);
        bindings.workflowId = key.slice(0, last);
        bindings.step = key.slice(last + 1);
      }
    }
    if (Object.keys(bindings).length === 0) return;
    // Fastify logs the response through reply.log, a separate reference: bind both.
    request.log = request.log.child(bindings);
    reply.log = request.log;
  });
}
