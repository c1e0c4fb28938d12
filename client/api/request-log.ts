// Every later log line of a request names what it is about (tenant, key, workflow).
import type { FastifyRequest } from 'fastify';
import type { Logger } from 'pino';

export function bindLog(request: FastifyRequest, bindings: Record<string, string>): void {
  // Fastify gives each request a logger of its own (a pino child naming its reqId), so its
  // bindings can grow in place: cheaper than a child per binding, and reply.log, the same
  // logger Fastify logs the response through, sees them too.
  (request.log as Logger).setBindings(bindings);
}
