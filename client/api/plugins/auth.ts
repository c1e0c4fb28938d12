// Who is asking, resolved once per request. With API keys configured every route needs one
// but liveness and readiness: the metrics and the API description tell too much to hand to
// anyone who reaches the port. An unknown path still answers 404, which tells nothing.
// Routes read `request.tenant`; none of them looks at the Authorization header.
import type { ApiInstance } from '../instance.js';
import type { Authenticator } from '../auth.js';
import { problems } from '../problems.js';
import { bindLog } from '../request-log.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The caller's tenant; set on every route but the open ones. */
    tenant: string;
  }
}

/** Liveness and readiness: probed by orchestrators, which hold no API key. */
const OPEN_ROUTES = new Set(['/healthz', '/readyz']);

export function installAuth(app: ApiInstance, authenticator: Authenticator): void {
  app.decorateRequest('tenant', '');
  app.addHook('onRequest', async (request, reply) => {
    if (request.is404 || OPEN_ROUTES.has(request.routeOptions.url ?? '')) return;
    const tenant = authenticator.tenantFor(request.headers.authorization);
    if (tenant === undefined) throw problems.unauthorized();
    request.tenant = tenant;
    bindLog(request, reply, { tenant });
  });
  if (authenticator.devMode) {
    app.log.warn('DEV MODE: RETRYSAFE_API_KEYS is not set; every request is tenant "default" without an API key');
  }
}
