// Fastify's own request lines ("incoming request", "request completed"), unchanged for
// people, each carrying an `event` field for machines: a tool that counts the requests a
// process has in flight (the chaos run, before it kills one mid-request) reads the field,
// never the message. Shared by the API and the sandboxes.
import { LogController, type FastifyReply, type FastifyRequest } from 'fastify';
import { LogEvent } from '../log-events.js';

export class RequestEventLog extends LogController {
  override incomingRequest(request: FastifyRequest): void {
    if (this.isLogDisabled(request)) return;
    request.log.info({ event: LogEvent.requestReceived, req: request }, 'incoming request');
  }

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    if (this.isLogDisabled(request)) return;
    const fields = { event: LogEvent.requestFinished, res: reply, responseTime: reply.elapsedTime };
    if (error) reply.log.error({ ...fields, err: error }, 'request errored');
    else reply.log.info(fields, 'request completed');
  }
}
