// Every port of one cluster, derived from a single base so that several clusters (test
// runs in parallel worktrees) can live on one machine by picking distinct bases. Each
// Temporal process needs four ports of its own: gRPC, membership (ringpop gossip), pprof
// and Prometheus metrics; two processes of one machine collide on any of them otherwise.
import { createServer } from 'node:net';

export interface TemporalProcessPorts {
  grpc: number;
  membership: number;
  pprof: number;
  metrics: number;
}

export interface ClusterPorts {
  postgres: number;
  /** Clients connect to `frontend.grpc`; `http` is the frontend's HTTP API. */
  frontend: TemporalProcessPorts & { http: number };
  /** One entry per history process. */
  history: TemporalProcessPorts[];
  matching: TemporalProcessPorts;
  /** The internal worker service (system workflows: scanners, batch, schedules...). */
  worker: TemporalProcessPorts;
  ui: number;
}

/** How many consecutive ports `blockPorts` takes from its base (the UI sits apart). */
export function portBlockSize(historyCount = 2): number {
  return 3 + 3 + 4 * (historyCount + 2);
}

/**
 * The layout from one base: the frontend's gRPC port is `base` (7233 by default, the port
 * every Temporal client assumes), the Web UI is `base + 1000` as with the dev server, and
 * everything else follows the base in a fixed order (`portBlockSize` ports in all).
 */
export function blockPorts(base = 7233, historyCount = 2): ClusterPorts {
  let next = base + 1;
  const take = () => next++;
  const processPorts = (grpc?: number): TemporalProcessPorts => ({
    grpc: grpc ?? take(),
    membership: take(),
    pprof: take(),
    metrics: take(),
  });
  const http = take();
  const postgres = take();
  const frontend = { ...processPorts(base), http };
  const history = Array.from({ length: historyCount }, () => processPorts());
  const matching = processPorts();
  const worker = processPorts();
  return { postgres, frontend, history, matching, worker, ui: base + 1000 };
}

export interface PortUse {
  part: string;
  what: string;
  port: number;
}

/** Every port with its owner, for a check that they are free before anything starts. */
export function portUses(ports: ClusterPorts, names: { history: string[] }): PortUse[] {
  const of = (part: string, p: TemporalProcessPorts): PortUse[] => [
    { part, what: 'gRPC', port: p.grpc },
    { part, what: 'membership', port: p.membership },
    { part, what: 'pprof', port: p.pprof },
    { part, what: 'metrics', port: p.metrics },
  ];
  return [
    { part: 'postgres', what: 'PostgreSQL', port: ports.postgres },
    ...of('temporal-frontend', ports.frontend),
    { part: 'temporal-frontend', what: 'HTTP API', port: ports.frontend.http },
    ...ports.history.flatMap((p, i) => of(names.history[i]!, p)),
    ...of('temporal-matching', ports.matching),
    ...of('temporal-worker', ports.worker),
    { part: 'temporal-ui', what: 'Web UI', port: ports.ui },
  ];
}

function listenable(port: number): Promise<boolean> {
  return new Promise((done) => {
    const srv = createServer();
    srv.unref();
    srv.once('error', () => done(false));
    srv.listen({ host: '127.0.0.1', port, exclusive: true }, () => srv.close(() => done(true)));
  });
}

/**
 * A base whose whole block (and UI port) is free right now, for runs that must not
 * collide with another cluster on the machine (parallel test runs). Free now is all a
 * probe can say: the caller still reports a port taken between this check and the start.
 */
export async function findFreeBase(historyCount = 2, attempts = 50): Promise<number> {
  const size = portBlockSize(historyCount);
  for (let i = 0; i < attempts; i++) {
    // 10000-30000: the block and base + 1000 stay below Linux's default ephemeral range (32768+).
    const base = 10_000 + Math.floor(Math.random() * 20_000);
    const ports = [...Array.from({ length: size }, (_, k) => base + k), base + 1000];
    let free = true;
    for (const port of ports) {
      if (!(await listenable(port))) {
        free = false;
        break;
      }
    }
    if (free) return base;
  }
  throw new Error(`no free block of ${size} ports found in ${attempts} attempts`);
}
