// Readiness of one Temporal process: the standard gRPC health service every Temporal
// service registers on its own gRPC port. A history process answers SERVING only once it
// owns its first shards (plus a few seconds to settle), so "ready" means it takes work.
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Connection } from '@temporalio/client';
import proto from '@temporalio/proto';
import { postgresBinDir } from '../postgres.js';
import type { TemporalRole } from './config.js';

const { ServingStatus } = proto.grpc.health.v1.HealthCheckResponse;
const run = promisify(execFile);

/** The name each service reports its health under (from the server's own handlers). */
export const HEALTH_SERVICE: Record<TemporalRole, string> = {
  frontend: 'temporal.api.workflowservice.v1.WorkflowService',
  history: 'temporal.api.workflowservice.v1.HistoryService',
  matching: 'temporal.api.workflowservice.v1.MatchingService',
  worker: 'temporal.api.workflowservice.v1.WorkerService',
};

/** True when the gRPC server at `address` reports `service` as SERVING within `timeoutMs`. */
export async function grpcServing(address: string, service: string, timeoutMs = 2_000): Promise<boolean> {
  const connection = Connection.lazy({ address });
  try {
    const res = await connection.withDeadline(Date.now() + timeoutMs, () => connection.healthService.check({ service }));
    return res.status === ServingStatus.SERVING;
  } catch {
    return false;
  } finally {
    await connection.close();
  }
}

/** True once PostgreSQL accepts connections on 127.0.0.1:port (pg_isready, without blocking). */
export async function postgresAccepting(port: number): Promise<boolean> {
  try {
    await run(join(postgresBinDir(), 'pg_isready'), ['-h', '127.0.0.1', '-p', String(port), '-U', 'postgres', '-q'], {
      timeout: 5_000,
    });
    return true;
  } catch {
    return false;
  }
}

/** True when GET `url` answers 200. */
export async function httpOk(url: string, timeoutMs = 2_000): Promise<boolean> {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) });
    await res.body?.cancel();
    return res.status === 200;
  } catch {
    return false;
  }
}
