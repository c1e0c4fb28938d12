// Every later log line of a request names what it is about (tenant, key, workflow).
import type { FastifyReply, FastifyRequest } from 'fastify';

export function bindLog(request: FastifyRequest, reply: FastifyReply, bindings: Record<string, string>): void {
  // Fastify logs the response through reply.log, a separate reference: bind both.
  request.log = request.log.child(bindings);
  reply.log = request.log;
}
