// A small HTTP/1.1 client over keep-alive sockets (node:http), the same for retrysafe's
// API and the plain baseline, so neither side pays for a heavier client than the other.
import { Agent, request } from 'node:http';

export interface HttpAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

export interface HttpClient {
  send(method: string, url: string, opts?: { headers?: Record<string, string>; body?: string }): Promise<HttpAnswer>;
  json<T = Record<string, unknown>>(method: string, url: string, body?: unknown): Promise<{ status: number; body: T }>;
  close(): void;
}

export function httpClient(maxSockets: number, timeoutMs = 70_000): HttpClient {
  const agent = new Agent({ keepAlive: true, maxSockets, maxFreeSockets: maxSockets });
  const send: HttpClient['send'] = (method, url, opts = {}) =>
    new Promise((resolve, reject) => {
      const headers: Record<string, string | number> = { ...opts.headers };
      if (opts.body !== undefined) headers['content-length'] = Buffer.byteLength(opts.body);
      const req = request(url, { method, agent, headers, timeout: timeoutMs }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') }),
        );
        res.on('error', reject);
      });
      req.on('timeout', () => req.destroy(new Error(`${method} ${url} timed out after ${timeoutMs} ms`)));
      req.on('error', reject);
      req.end(opts.body);
    });
  return {
    send,
    async json(method, url, body) {
      const res = await send(method, url, {
        headers: body === undefined ? {} : { 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      return { status: res.status, body: (res.text ? JSON.parse(res.text) : {}) as never };
    },
    close: () => agent.destroy(),
  };
}
