// A Zipkin collector on loopback for the tests: real HTTP, the span endpoint the processes'
// Zipkin exporters POST to (`OTEL_EXPORTER_ZIPKIN_ENDPOINT`), every span kept as it arrived
// in Zipkin's v2 JSON. The API, the worker and the sandboxes run as separate processes, so
// this is how a test sees one trace across all of them.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

/** A span as the Zipkin exporter sends it (Zipkin's v2 model: tags are strings, no links). */
export interface ZipkinSpan {
  traceId: string;
  id: string;
  parentId?: string;
  name: string;
  /** Absent for an internal span. */
  kind?: 'CLIENT' | 'SERVER' | 'PRODUCER' | 'CONSUMER';
  timestamp: number;
  duration: number;
  localEndpoint?: { serviceName?: string };
  tags?: Record<string, string>;
}

export interface ZipkinCollector {
  /** What OTEL_EXPORTER_ZIPKIN_ENDPOINT is set to. */
  endpoint: string;
  readonly spans: ZipkinSpan[];
  /** Waits until `found` returns something for the spans collected so far. */
  waitFor<T>(what: string, found: (spans: ZipkinSpan[]) => T | undefined, timeoutMs?: number): Promise<T>;
  close(): Promise<void>;
}

export async function startZipkinCollector(): Promise<ZipkinCollector> {
  const spans: ZipkinSpan[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/api/v2/spans') {
        res.writeHead(404).end();
        return;
      }
      try {
        spans.push(...(JSON.parse(Buffer.concat(chunks).toString()) as ZipkinSpan[]));
        res.writeHead(202).end();
      } catch {
        res.writeHead(400).end();
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}/api/v2/spans`,
    spans,
    async waitFor(what, found, timeoutMs = 20_000) {
      const until = Date.now() + timeoutMs;
      for (;;) {
        const value = found(spans);
        if (value !== undefined) return value;
        if (Date.now() > until) throw new Error(`no ${what} among the ${spans.length} spans collected within ${timeoutMs} ms`);
        await sleep(100);
      }
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
