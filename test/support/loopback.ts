// A test's own small server (a stand-in API, a proxy, a scripted downstream) on a free
// loopback port.
import { once } from 'node:events';
import type { Server } from 'node:net';

/** Listens on 127.0.0.1, port 0; returns the base URL, `http://127.0.0.1:<port>`. */
export async function listenOnFreePort(server: Server): Promise<string> {
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return `http://127.0.0.1:${(server.address() as { port: number }).port}`;
}

/** The port of a URL `listenOnFreePort` returned. */
export const portOf = (url: string): number => Number(new URL(url).port);
