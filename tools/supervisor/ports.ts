// Ports of a stack's parts: a free one for a throwaway stack (tests, bench, chaos run), and
// the check, before anything starts, that a fixed one can be listened on, naming the part
// that wanted it, instead of a child's crash half-way through.
import { createServer } from 'node:net';

/**
 * Where free ports are looked for: below the ephemeral range from which the kernel gives
 * outgoing connections their local ports (Linux 32768-60999, macOS 49152-65535). A port
 * the kernel picked with listen(0) comes from that range, and between closing the probe
 * and the child's own listen, any of the stack's thousands of outgoing connections could
 * take it (seen once: "port 43911 is already in use" in a full-suite run).
 */
export const FREE_PORT_RANGE = { from: 10_000, to: 32_767 } as const;

const SPAN = FREE_PORT_RANGE.to - FREE_PORT_RANGE.from + 1;
/**
 * Each process walks the range from its own random start, so it never hands out one port
 * twice (a stack takes a dozen before any is listened on), and two processes meet only
 * if their walks overlap at the same moment.
 */
let next = Math.floor(Math.random() * SPAN);

/** A TCP port that was free a moment ago on `host`, outside the ephemeral range. */
export async function freePort(host = '127.0.0.1'): Promise<number> {
  for (let attempt = 0; attempt < 200; attempt++) {
    const port = FREE_PORT_RANGE.from + (next++ % SPAN);
    if ((await probePort(host, port)) === undefined) return port;
  }
  return anyFreePort(host);
}

/** A port the kernel says is free (from its ephemeral range). */
function anyFreePort(host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, host, () => {
      const addr = srv.address();
      srv.close(() => (typeof addr === 'object' && addr ? resolve(addr.port) : reject(new Error('no free port'))));
    });
  });
}

export interface PortClaim {
  /** The part that will listen there, as named in messages: "bank", "api". */
  part: string;
  /** What the port is for, e.g. "HTTP", "gRPC", "Web UI", "metrics". */
  what: string;
  host: string;
  port: number;
  /** The environment variable that sets it, for the hint in the message. */
  variable: string;
}

/** Why `host:port` cannot be listened on (EADDRINUSE, EACCES...), or undefined when it can. */
export function probePort(host: string, port: number): Promise<string | undefined> {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.unref();
    srv.once('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
    srv.listen({ host, port, exclusive: true }, () => srv.close(() => resolve(undefined)));
  });
}

export class PortBusyError extends Error {
  override name = 'PortBusyError';
  constructor(
    readonly claim: PortClaim,
    readonly code: string,
  ) {
    super(
      code === 'EADDRINUSE'
        ? `${claim.what} port ${claim.port} on ${claim.host} is already in use (set ${claim.variable} to another port, or stop what holds it)`
        : `cannot listen on ${claim.host}:${claim.port} for ${claim.what} (${code}; set ${claim.variable})`,
    );
  }
}

/** Throws PortBusyError for the first claim that cannot be listened on. */
export async function assertPortsFree(claims: PortClaim[]): Promise<void> {
  for (const claim of claims) {
    const code = await probePort(claim.host, claim.port);
    if (code) throw new PortBusyError(claim, code);
  }
}

/**
 * Finds "address already in use" in a child's output and the port it names, if any: after
 * the phrase as Node writes it (`EADDRINUSE: address already in use 127.0.0.1:3000`), or
 * before it as Go does (`listen tcp 127.0.0.1:7239: bind: address already in use`).
 */
export function addressInUse(line: string): { port?: number } | undefined {
  const at = line.search(/EADDRINUSE|address already in use/i);
  if (at < 0) return undefined;
  const after = /:(\d{1,5})\b(?![\d.])/.exec(line.slice(at));
  const before = [...line.slice(0, at).matchAll(/:(\d{1,5})\b(?![\d.])/g)].at(-1);
  const port = after ?? before;
  return port ? { port: Number(port[1]) } : {};
}
