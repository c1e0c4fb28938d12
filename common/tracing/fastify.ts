// The request span of every HTTP server of retrysafe (the API, the sandboxes, the example's
// service), from Fastify's official instrumentation: a server span per request that
// continues the caller's `traceparent`. Registered first, on the app itself rather than as
// a deferred plugin, so the span covers every hook (a 401 is traced too) and the routes
// registered after it end their span as they answer. Each route's handler then runs inside
// the request's context, so the spans and log lines it makes belong to the request (after
// the body is read, Node's own callbacks would have lost it). Tracing off, nothing is added.
import { context } from '@opentelemetry/api';
import type {
  FastifyBaseLogger,
  FastifyInstance,
  FastifyReply,
  FastifyRequest,
  FastifyTypeProvider,
  RawReplyDefaultExpression,
  RawRequestDefaultExpression,
  RawServerBase,
  RouteOptions,
} from 'fastify';
import { activeTracing } from './start.js';

type Handler = (this: unknown, request: FastifyRequest, reply: FastifyReply) => unknown;

export function installRequestTracing<S extends RawServerBase, L extends FastifyBaseLogger, P extends FastifyTypeProvider>(
  typed: FastifyInstance<S, RawRequestDefaultExpression<S>, RawReplyDefaultExpression<S>, L, P>,
): void {
  const tracing = activeTracing();
  if (!tracing) return;
  // The hooks below take any request: the app's own types do not matter to them.
  const app = typed as unknown as FastifyInstance;
  // What `app.register(plugin)` would run once the app loads, run now (as the
  // instrumentation's own registerOnInitialization does).
  tracing.fastify.plugin()(app, {}, () => undefined);
  app.addHook('onRoute', (route: RouteOptions) => {
    const handler = route.handler as Handler;
    route.handler = function inRequestContext(this: unknown, request: FastifyRequest, reply: FastifyReply) {
      const requestContext = request.opentelemetry().context;
      return requestContext ? context.with(requestContext, handler, this, request, reply) : handler.call(this, request, reply);
    } as RouteOptions['handler'];
  });
}
