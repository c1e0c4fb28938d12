// Fastify's own request lines ("incoming request", "request completed"), unchanged for
// people, each carrying an `event` field for machines: a tool that counts the requests a
// process has in flight (the chaos run, before it kills one mid-request) reads the field,
// never the message. Shared by the API and the sandboxes.
//
// A route may put off its "incoming request" line (`deferReceived`) until it has decided to
// take the request on (`logReceived`): the API's start routes write it once admission lets a
// request through, so a flood's refusals, answered before any work, cost one line each, not
// two.
import { LogController, type FastifyReply, type FastifyRequest } from 'fastify';
import { LogEvent } from '../log-events.js';

/** The "incoming request" line of a request whose route put it off. */
export function logReceived(request: FastifyRequest): void {
  request.log.info({ event: LogEvent.requestReceived, req: request }, 'incoming request');
}

export class RequestEventLog extends LogController {
  constructor(private readonly deferReceived: (request: FastifyRequest) => boolean = () => false) {
    super();
  }

  override incomingRequest(request: FastifyRequest): void {
    if (this.isLogDisabled(request) || this.deferReceived(request)) return;
    logReceived(request);
  }

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    if (this.isLogDisabled(request)) return;
    const fields = { event: LogEvent.requestFinished, res: reply, responseTime: reply.elapsedTime };
    if (error) reply.log.error({ ...fields, err: error }, 'request errored');
    else reply.log.info(fields, 'request completed');
  }
}
