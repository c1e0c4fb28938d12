// A method a known path does not support (TRACE, QUERY, PUT /v1/payments, ...) answers 405
// with the methods it does support in `Allow` (RFC 9110 §15.5.6), not 404: the resource is
// there. The router only tells "no route", so the routes are recorded as they are added and
// a request that matched none is checked here, in onRequest: before its body is parsed (a
// QUERY without a Content-Type must still get its 405) and before any route's own checks. A
// route that serves only some of the paths its pattern matches says which with
// `config.servesPath`.
import type { ApiInstance } from '../instance.js';
import { problems } from '../problems.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Narrows the paths a route's pattern matches to those it actually serves. */
    servesPath?: (path: string) => boolean;
  }
}

interface RouteShape {
  methods: string[];
  pattern: RegExp;
  servesPath?: (path: string) => boolean;
}

/** find-my-way's pattern as a regular expression over the raw (still percent-encoded) path. */
function patternOf(url: string): RegExp {
  const source = url
    .split(/(:[A-Za-z0-9_]+|\*)/)
    .map((part) => (part === '*' ? '.*' : part.startsWith(':') ? '[^/]+' : part.replace(/[.+?^${}()|[\]\\]/g, '\\$&')))
    .join('');
  return new RegExp(`^${source}$`);
}

export class AllowedMethods {
  private readonly routes: RouteShape[] = [];

  /** Records every route added after this, in any plugin, and answers 405 for the others' paths. */
  install(app: ApiInstance): void {
    app.addHook('onRoute', (route) => {
      const methods = (Array.isArray(route.method) ? route.method : [route.method]).map((m) => m.toUpperCase());
      this.routes.push({ methods, pattern: patternOf(route.url), servesPath: route.config?.servesPath });
    });
    app.addHook('onRequest', async (request) => {
      if (!request.is404) return;
      const allowed = this.of(request.url.split('?')[0]!);
      if (allowed.length > 0 && !allowed.includes(request.method)) throw problems.methodNotAllowed(request.method, allowed);
    });
  }

  /** The methods `path` supports, sorted; empty when no route has it. */
  of(path: string): string[] {
    const methods = new Set<string>();
    for (const route of this.routes) {
      if (!route.pattern.test(path) || (route.servesPath && !route.servesPath(path))) continue;
      for (const m of route.methods) methods.add(m);
    }
    if (methods.has('GET')) methods.add('HEAD');
    return [...methods].sort();
  }
}
