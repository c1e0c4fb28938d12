// Who is asking, resolved once per request. With API keys configured every route needs one
// but liveness and readiness: the API description tells too much to hand to anyone who
// reaches the port. An unknown path still answers 404, which tells nothing. Routes read
// `request.tenant`; none of them looks at the Authorization header.
//
// /metrics is the operators', not the tenants': it shows the whole platform's volume. A
// tenant's key is refused there (403); a scrape from this machine needs no key, and one from
// elsewhere sends RETRYSAFE_METRICS_TOKEN as its bearer.
import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import type { ApiInstance } from '../instance.js';
import type { Authenticator } from '../auth.js';
import { isLoopbackAddress } from '../loopback.js';
import { problems } from '../problems.js';
import { bindLog } from '../request-log.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The caller's tenant; set on every route but the open ones and /metrics. */
    tenant: string;
  }
}

/** Liveness and readiness: probed by orchestrators, which hold no API key. */
const OPEN_ROUTES = new Set(['/healthz', '/readyz']);
const METRICS_ROUTE = '/metrics';

const digest = (secret: string) => createHash('sha256').update(secret, 'utf8').digest();

/** Who may scrape /metrics: see the header. Throws the problem that refuses the scrape. */
function authorizeScrape(request: FastifyRequest, authenticator: Authenticator, token: Buffer | undefined): void {
  const authorization = request.headers.authorization;
  if (authorization === undefined) {
    if (isLoopbackAddress(request.socket.remoteAddress)) return;
    throw problems.unauthorized('scrape /metrics from this machine, or send "Authorization: Bearer <RETRYSAFE_METRICS_TOKEN>"');
  }
  const bearer = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(authorization)?.[1];
  // Hashed to one length first, so the comparison's time tells nothing of the token.
  if (token && bearer !== undefined && timingSafeEqual(digest(bearer), token)) return;
  if (!authenticator.devMode && authenticator.tenantFor(authorization) !== undefined) throw problems.metricsForbidden();
  throw problems.unauthorized('send "Authorization: Bearer <RETRYSAFE_METRICS_TOKEN>", or scrape from this machine');
}

export function installAuth(app: ApiInstance, authenticator: Authenticator, metricsToken?: string): void {
  const token = metricsToken === undefined ? undefined : digest(metricsToken);
  app.decorateRequest('tenant', '');
  app.addHook('onRequest', async (request) => {
    const route = request.routeOptions.url ?? '';
    if (request.is404 || OPEN_ROUTES.has(route)) return;
    if (route === METRICS_ROUTE) return authorizeScrape(request, authenticator, token);
    const tenant = authenticator.tenantFor(request.headers.authorization);
    if (tenant === undefined) throw problems.unauthorized();
    request.tenant = tenant;
    bindLog(request, { tenant });
  });
  if (authenticator.devMode) {
    app.log.warn('DEV MODE: RETRYSAFE_API_KEYS is not set; every request is tenant "default" without an API key');
  }
}
