// Binds what a request is about to every log line it produces: its idempotency key (from
// the header, or from the path for reverse/confirm/release), and, when the key was derived
// by retrysafe (`<tenant>/<key>/<step>`), the tenant, workflow and step. The caller's
// X-Request-Id is kept too, so a worker's attempt and the sandbox's answer meet.
import { parseDownstreamKey } from '../../workflows/identity.js';
import type { SandboxApp } from './http.js';
import { keyFromPath, requireKey } from './idempotency-key.js';

/** The request's key, or undefined when it names none (the route answers a bad one itself). */
function keyOf(
  header: string | string[] | undefined,
  url: string,
  keyedPaths: Array<{ prefix: string; suffixes: string[] }>,
): string | undefined {
  try {
    if (header !== undefined) return requireKey(header);
    for (const { prefix, suffixes } of keyedPaths) {
      for (const suffix of suffixes) {
        const key = keyFromPath(url, prefix, suffix);
        if (key !== undefined) return key;
      }
    }
  } catch {
    return undefined;
  }
  return undefined;
}

/** Path prefixes whose next segment(s) hold a key: `/charges/{key}/reverse` and the like. */
export function bindRequestContext(app: SandboxApp, keyedPaths: Array<{ prefix: string; suffixes: string[] }>): void {
  app.addHook('onRequest', async (request, reply) => {
    const key = keyOf(request.headers['idempotency-key'], request.raw.url ?? '', keyedPaths);
    const requestId = request.headers['x-request-id'];
    const bindings: Record<string, string> = {};
    if (typeof requestId === 'string' && requestId.length <= 200) bindings.requestId = requestId;
    if (key !== undefined) {
      bindings.key = key;
      const derived = parseDownstreamKey(key);
      if (derived) {
        bindings.tenant = derived.tenant;
        bindings.workflowId = derived.workflowId;
        bindings.step = derived.suffix;
      }
    }
    if (Object.keys(bindings).length === 0) return;
    // Fastify logs the response through reply.log, a separate reference: bind both.
    request.log = request.log.child(bindings);
    reply.log = request.log;
  });
}
