// A test's own small server (a stand-in API, a proxy, a scripted downstream) on a free
// loopback port.
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { Server } from 'node:net';
import { afterAll, beforeAll } from 'vitest';

/** Listens on 127.0.0.1, port 0; returns the base URL, `http://127.0.0.1:<port>`. */
export async function listenOnFreePort(server: Server): Promise<string> {
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return `http://127.0.0.1:${(server.address() as { port: number }).port}`;
}

/** The port of a URL `listenOnFreePort` returned. */
export const portOf = (url: string): number => Number(new URL(url).port);

/**
 * A stand-in that only counts what reaches it (answering 500), started and closed with the
 * test file: a usage error must leave `received()` where it was.
 */
export function useRequestCounter(): { url: () => string; received: () => number } {
  let received = 0;
  let url = '';
  const server = createServer((_req, res) => {
    received++;
    res.writeHead(500).end();
  });
  beforeAll(async () => {
    url = await listenOnFreePort(server);
  });
  afterAll(async () => {
    await new Promise((r) => server.close(r));
  });
  return { url: () => url, received: () => received };
}
