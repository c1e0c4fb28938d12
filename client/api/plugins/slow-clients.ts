// Slow clients (slowloris: a header byte a second, a body that never ends) would otherwise
// hold a connection for as long as they like: Fastify turns Node's request timeout off.
// Both limits cover receiving the request only; the wait for an outcome (Prefer: wait=60)
// comes after it and is not cut short.
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

export interface HttpLimits {
  /** The request line and headers must arrive within this. */
  headersTimeoutMs: number;
  /** The whole request, body included, must arrive within this. */
  requestTimeoutMs: number;
}

export const HTTP_LIMITS: HttpLimits = { headersTimeoutMs: 10_000, requestTimeoutMs: 30_000 };

/**
 * Fastify server options that turn Node's own enforcement of the limits off:
 * guardSlowClients enforces both instead. Node checks its limits from a timer that, in a
 * process starved of CPU, runs before the bytes that arrived in time are read, so it
 * answered 408 to requests that came in time; and on Node 20 it loses connections accepted
 * in the same moment (a burst of slowloris sockets is exactly that), never timing them out.
 */
export const NODE_TIMEOUTS_OFF = { requestTimeout: 0, http: { headersTimeout: 0, requestTimeout: 0 } } as const;

/**
 * Every connection carries a deadline of its own: its request headers within the headers
 * timeout of connecting (or of its previous answer plus the keep-alive timeout), its body
 * within the request timeout of its headers. A request that has been received in full is
 * never cut short. A missed deadline is reported as the parser's own timeout error, so one
 * handler answers both.
 */
export function guardSlowClients(server: Server, limits: HttpLimits, keepAliveMs: number): void {
  const deadlines = new WeakMap<Socket, NodeJS.Timeout>();
  const current = new WeakMap<Socket, IncomingMessage>();
  const arm = (socket: Socket, ms: number) => {
    clearTimeout(deadlines.get(socket));
    const timer = setTimeout(() => {
      // A process starved of CPU runs its expired timers before it reads the bytes that
      // arrived meanwhile: look again once pending input has been read (setImmediate runs
      // after the poll phase), so a request that came in time is not refused as late.
      setImmediate(() => {
        if (deadlines.get(socket) !== timer) return; // re-armed by a request read just now
        if (socket.destroyed || current.get(socket)?.complete) return;
        const err = Object.assign(new Error('the request did not arrive in time'), { code: 'ERR_HTTP_REQUEST_TIMEOUT' });
        server.emit('clientError', err, socket);
      });
    }, ms);
    timer.unref();
    deadlines.set(socket, timer);
  };
  server.on('connection', (socket: Socket) => {
    arm(socket, limits.headersTimeoutMs);
    socket.once('close', () => clearTimeout(deadlines.get(socket)));
  });
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const socket = req.socket;
    current.set(socket, req);
    arm(socket, limits.requestTimeoutMs);
    res.once('finish', () => {
      if (current.get(socket) !== req || socket.destroyed) return;
      current.delete(socket);
      arm(socket, keepAliveMs + limits.headersTimeoutMs);
    });
  });
}
