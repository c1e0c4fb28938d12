// Shared pieces of the hostile-input and security suites: a raw HTTP/1.1 client (fetch
// refuses to send the bytes these tests need), a checker of answers against the API's own
// OpenAPI document, a leak detector for answer bodies, and an API on a real port whose
// limits a test may shorten.
import { hostname } from 'node:os';
import { connect } from 'node:net';
import { Client, Connection } from '@temporalio/client';
import { Registry } from 'prom-client';
import Schema from 'typebox/schema';
import { inject } from 'vitest';
import { buildApp, type App, type HttpLimits } from '../../client/api/app.js';
import { loadApiConfig } from '../../client/api/config.js';
import { FIXED_IN_FLIGHT } from '../support/api.js';
import { createLogger } from '../../common/logger.js';
import { dereference } from '../support/openapi.js';

export interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
  /** The body parsed as JSON, or undefined. */
  json: Record<string, unknown> | undefined;
}

export type RawResult = ({ closed: false } & RawAnswer) | { closed: true; error?: string; received: string };

export interface RawRequest {
  method: string;
  /** The request target as bytes: may hold anything, even invalid UTF-8. */
  path: string | Buffer;
  headers?: Array<[string, string | Buffer]>;
  body?: string | Buffer;
  timeoutMs?: number;
}

/** One request on a fresh connection (Connection: close), read until the server closes it. */
export function rawRequest(port: number, req: RawRequest): Promise<RawResult> {
  const body = req.body === undefined ? undefined : Buffer.isBuffer(req.body) ? req.body : Buffer.from(req.body, 'utf8');
  const parts: Buffer[] = [
    Buffer.from(`${req.method} `, 'latin1'),
    Buffer.isBuffer(req.path) ? req.path : Buffer.from(req.path, 'latin1'),
  ];
  parts.push(Buffer.from(' HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n', 'latin1'));
  for (const [name, value] of req.headers ?? []) {
    parts.push(
      Buffer.from(`${name}: `, 'latin1'),
      Buffer.isBuffer(value) ? value : Buffer.from(value, 'latin1'),
      Buffer.from('\r\n'),
    );
  }
  if (body !== undefined) parts.push(Buffer.from(`Content-Length: ${body.length}\r\n`));
  parts.push(Buffer.from('\r\n'));
  if (body !== undefined) parts.push(body);
  return sendRaw(port, Buffer.concat(parts), req.timeoutMs ?? 30_000);
}

/** Writes `bytes` and collects the answer until the server closes the connection. */
export function sendRaw(port: number, bytes: Buffer, timeoutMs = 30_000): Promise<RawResult> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    const chunks: Buffer[] = [];
    let error: string | undefined;
    const timer = setTimeout(() => {
      error = `no end of answer within ${timeoutMs} ms`;
      socket.destroy();
    }, timeoutMs);
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('error', (err: NodeJS.ErrnoException) => {
      error ??= err.code ?? err.message;
    });
    socket.on('close', () => {
      clearTimeout(timer);
      const received = Buffer.concat(chunks);
      const parsed = parseAnswer(received);
      resolve(
        parsed && !error?.startsWith('no end')
          ? { closed: false, ...parsed }
          : { closed: true, error, received: received.toString('latin1') },
      );
    });
    // No half-close: Node's HTTP server takes a FIN as the client going away. The server
    // may answer (and close) before it read everything, e.g. a 413: that is fine.
    socket.on('connect', () => socket.write(bytes));
  });
}

function parseAnswer(raw: Buffer): RawAnswer | undefined {
  const end = raw.indexOf('\r\n\r\n');
  if (end < 0) return undefined;
  const head = raw.subarray(0, end).toString('latin1').split('\r\n');
  const status = /^HTTP\/1\.[01] (\d{3})/.exec(head[0] ?? '');
  if (!status) return undefined;
  const headers: Record<string, string> = {};
  for (const line of head.slice(1)) {
    const colon = line.indexOf(':');
    if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  let bodyBytes = raw.subarray(end + 4);
  if (headers['transfer-encoding']?.toLowerCase() === 'chunked') bodyBytes = unchunk(bodyBytes);
  else if (headers['content-length'] !== undefined) bodyBytes = bodyBytes.subarray(0, Number(headers['content-length']));
  const body = bodyBytes.toString('utf8');
  let json: Record<string, unknown> | undefined;
  try {
    const value: unknown = JSON.parse(body);
    if (typeof value === 'object' && value !== null && !Array.isArray(value)) json = value as Record<string, unknown>;
  } catch {
    json = undefined;
  }
  return { status: Number(status[1]), headers, body, json };
}

function unchunk(data: Buffer): Buffer {
  const out: Buffer[] = [];
  let at = 0;
  for (;;) {
    const eol = data.indexOf('\r\n', at);
    if (eol < 0) break;
    const size = parseInt(data.subarray(at, eol).toString('latin1'), 16);
    if (!Number.isFinite(size) || size === 0) break;
    out.push(data.subarray(eol + 2, eol + 2 + size));
    at = eol + 2 + size + 2;
  }
  return Buffer.concat(out);
}

// ---------------------------------------------------------------------------------------
// The contract: answers checked against the OpenAPI document the API itself serves.

interface MediaDoc {
  schema?: unknown;
}
interface ResponseDoc {
  content?: Record<string, MediaDoc>;
  headers?: Record<string, { schema?: { type?: string }; required?: boolean }>;
}
interface OpenApiDoc {
  paths: Record<string, Record<string, { responses: Record<string, ResponseDoc> }>>;
}

/**
 * The documented route a request belongs to (keys with "/" belong to /v1/operations/{key});
 * a POST to `…/cancel` is the cancel of the key before it.
 */
export function documentedRoute(path: string, method = 'GET'): string | undefined {
  const bare = path.split('?')[0] ?? '';
  if (bare === '/v1/operations') return '/v1/operations';
  if (method === 'POST' && bare.startsWith('/v1/operations/') && bare.endsWith('/cancel')) return '/v1/operations/{key}/cancel';
  if (bare.startsWith('/v1/operations/')) return '/v1/operations/{key}';
  if (['/v1/payments', '/v1/checkouts', '/healthz', '/readyz', '/metrics'].includes(bare)) return bare;
  return undefined;
}

export class Contract {
  private readonly validators = new Map<string, ReturnType<typeof Schema.Compile>>();

  constructor(readonly doc: OpenApiDoc) {}

  static async load(baseUrl: string, authorization?: string): Promise<Contract> {
    const res = await fetch(`${baseUrl}/openapi.json`, { headers: authorization ? { authorization } : {} });
    if (res.status !== 200) throw new Error(`GET /openapi.json → ${res.status}`);
    // Each answer's schema is compiled on its own: the named schemas it refers to are inlined.
    return new Contract(dereference((await res.json()) as OpenApiDoc));
  }

  /** Every way `answer` departs from what the document declares for `method route`. */
  violations(method: string, route: string, answer: RawAnswer): string[] {
    const op = this.doc.paths[route]?.[method.toLowerCase()];
    if (!op) return [`${method} ${route} is not in the OpenAPI document`];
    const declared = op.responses[String(answer.status)];
    if (!declared)
      return [`${method} ${route} answered ${answer.status}, which is not documented (${Object.keys(op.responses).join(', ')})`];
    const out: string[] = [];
    const mediaType = (answer.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
    const media = declared.content?.[mediaType];
    if (!media) {
      out.push(
        `${answer.status}: content type "${mediaType}" is not documented (${Object.keys(declared.content ?? {}).join(', ')})`,
      );
    } else if (media.schema !== undefined) {
      const value: unknown = mediaType.endsWith('json') ? answer.json : answer.body;
      const key = `${method} ${route} ${answer.status} ${mediaType}`;
      let validator = this.validators.get(key);
      if (!validator) {
        validator = Schema.Compile(media.schema as Parameters<typeof Schema.Compile>[0]);
        this.validators.set(key, validator);
      }
      if (value === undefined || !validator.Check(value))
        out.push(`${answer.status}: the body does not match its schema: ${answer.body.slice(0, 300)}`);
    }
    for (const [name, header] of Object.entries(declared.headers ?? {})) {
      const value = answer.headers[name.toLowerCase()];
      if (value === undefined) {
        if (header.required) out.push(`${answer.status}: the required header ${name} is missing`);
      } else if (header.schema?.type === 'integer' && !/^\d+$/.test(value)) {
        out.push(`${answer.status}: header ${name}=${value} is not an integer`);
      }
    }
    if (answer.status >= 400) out.push(...problemViolations(answer));
    return out;
  }
}

/** An error answer must be RFC 9457 problem details with a stable code. */
export function problemViolations(answer: RawAnswer): string[] {
  const out: string[] = [];
  if (!/^application\/problem\+json\b/.test(answer.headers['content-type'] ?? '')) {
    out.push(`${answer.status} is not application/problem+json but ${answer.headers['content-type'] ?? '(none)'}`);
  }
  const body = answer.json;
  if (
    !body ||
    typeof body.code !== 'string' ||
    body.status !== answer.status ||
    body.type !== `urn:retrysafe:problem:${String(body.code)}`
  ) {
    out.push(`${answer.status}: not a problem document with a code: ${answer.body.slice(0, 200)}`);
  }
  // engine_busy: the instance's bound on operations in flight, or Temporal overloaded; both retryable.
  const retryable503 = body?.code === 'engine_unavailable' || body?.code === 'engine_busy';
  if (answer.status === 503 && (!retryable503 || !/^\d+$/.test(answer.headers['retry-after'] ?? ''))) {
    out.push(`503 without engine_unavailable or engine_busy and Retry-After: ${answer.body.slice(0, 200)}`);
  }
  return out;
}

// ---------------------------------------------------------------------------------------
// Leaks: what an answer must never carry.

const HOST = hostname();
const LEAKS: Array<[string, RegExp]> = [
  ['a stack frame', /\bat (?:async )?[\w$.<>]+ \(|\bat (?:file:\/\/)?\/[^\s)]+:\d+:\d+/],
  ['a file path', /\/(?:work|home|root|tmp|usr|var|opt|srv|app)\/|node_modules/],
  ['a source file name', /\.(?:ts|js|mjs|cjs):\d+/],
  [
    'an internal error class',
    /\b(?:TypeError|ReferenceError|RangeError|SyntaxError|ServiceError|WorkflowNotFoundError|SQLITE_\w+)\b/,
  ],
];

/**
 * Why `text` leaks something, or undefined when it is clean. `echoes` are inputs the answer
 * may legitimately repeat (a key, a path, a field name), removed before looking.
 */
export function leakIn(text: string, echoes: string[] = []): string | undefined {
  for (const echo of echoes) {
    if (echo.length === 0) continue;
    for (const form of new Set([echo, JSON.stringify(echo).slice(1, -1), encodeURIComponent(echo)]))
      text = text.split(form).join('');
  }
  for (const [what, pattern] of LEAKS) {
    const m = pattern.exec(text);
    if (m) return `${what} (${m[0]})`;
  }
  if (HOST.length >= 3 && !['localhost', 'local'].includes(HOST) && text.includes(HOST)) return `the host name ${HOST}`;
  return undefined;
}

// ---------------------------------------------------------------------------------------
// An API on a real port, like test/support/api.ts, with deps a test may override.

export interface TestApi {
  app: App;
  url: string;
  port: number;
  registry: Registry;
  close(): Promise<void>;
}

export async function startTestApi(opts: {
  env: Record<string, string | undefined>;
  temporalAddress?: string;
  /** Connect lazily: the API must start while Temporal is down. */
  lazy?: boolean;
  httpLimits?: Partial<HttpLimits>;
}): Promise<TestApi> {
  const config = loadApiConfig({
    API_PORT: '0',
    TEMPORAL_UI_URL: 'http://localhost:8233',
    LOG_LEVEL: 'silent',
    // These suites send inputs as fast as they can and judge the answer to each one; the
    // bounds on a tenant's rate of reads and on what it has in flight have suites of their own.
    RETRYSAFE_TENANT_READ_LIMITS: '*=unlimited',
    ...FIXED_IN_FLIGHT,
    ...opts.env,
  });
  const address = opts.temporalAddress ?? inject('temporalAddress');
  const connection = opts.lazy ? Connection.lazy({ address }) : await Connection.connect({ address });
  const client = new Client({ connection, namespace: 'default' });
  const registry = new Registry();
  const app = buildApp({
    config,
    client,
    namespace: 'default',
    registry,
    logger: createLogger('api', { level: 'silent' }),
    httpLimits: opts.httpLimits,
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const port = (app.server.address() as { port: number }).port;
  return {
    app,
    url: `http://127.0.0.1:${port}`,
    port,
    registry,
    async close() {
      await app.close();
      await connection.close();
    },
  };
}

/** Value of a counter in the API's registry (summed over labels). */
export async function counter(registry: Registry, name: string): Promise<number> {
  const metric = registry.getSingleMetric(name);
  if (!metric) return 0;
  const { values } = await metric.get();
  return values.reduce((sum, v) => sum + v.value, 0);
}
