// What a worker checks before it polls, so that a missing piece shows at start, named,
// instead of as a step retried until its deadline and then fenced:
//
// - every service its own definitions' declared calls name has a base URL, and every
//   activity they name is registered;
// - every open operation on its task queue can run here: each one's recorded definition
//   (its memo) names services and activities, and the worker must have them all. A new
//   release that dropped a service an operation in flight still calls would otherwise
//   leave that operation to fail step by step.
import { Client, Connection, type ConnectionOptions } from '@temporalio/client';
import { ConfigError } from '../common/env.js';
import type { ProgramNeeds } from '../workflows/program.js';
import type { DefinitionCatalog } from '../workflows/catalog.js';
import { openOperations, unrunnable } from './open-operations.js';
import type { DeploymentVersion } from './versioning.js';

/** The worker's own definitions against what it has. */
export function definitionProblems(catalog: DefinitionCatalog, has: ProgramNeeds): string[] {
  return [
    ...catalog.declaredServices
      .filter((s) => !has.services.includes(s))
      .map((s) => `RETRYSAFE_SERVICES has no base URL for service ${s}, which an operation calls`),
    ...catalog.activityNames
      .filter((a) => !has.activities.includes(a))
      .map((a) => `no activities.ts of RETRYSAFE_OPERATIONS registers the activity ${a}, which an operation calls`),
  ];
}

/** How long the look-up may wait for the engine (a worker restarted with Temporal, or just before it). */
const LOOKUP_PATIENCE_MS = 30_000;

/**
 * Refuses to start when an open operation of the task queue needs what this worker lacks
 * (one visibility query per version in flight). A versioned worker answers only for the
 * operations it may get: unversioned ones and those pinned to its own build (the others
 * stay on theirs). An engine that does not answer in time is
 * no reason to refuse: `warn` says the look-up was skipped, and the first call of each
 * operation still checks the worker against what its program needs.
 */
export async function checkOpenOperations(
  where: { connection: ConnectionOptions; namespace: string; taskQueue: string },
  worker: { has: ProgramNeeds; catalog: DefinitionCatalog; deployment?: DeploymentVersion },
  warn: (message: string) => void,
): Promise<void> {
  const { connection, namespace, taskQueue } = where;
  const { has, catalog, deployment } = worker;
  const open = await lookUp(connection, namespace, taskQueue, deployment).catch((err: unknown) => {
    warn(`could not look up the open operations' definitions (${(err as Error).message}); starting without that check`);
    return undefined;
  });
  if (!open) return;
  const problems = unrunnable(open, has, catalog.types);
  if (problems.length > 0) {
    throw new ConfigError([
      `open operations on task queue ${taskQueue} need what this worker lacks; give it what they need, or let a worker that has it finish them:`,
      ...problems,
    ]);
  }
}

/** The open operations, read as soon as the engine answers (within LOOKUP_PATIENCE_MS). */
async function lookUp(connection: ConnectionOptions, namespace: string, taskQueue: string, deployment?: DeploymentVersion) {
  const until = Date.now() + LOOKUP_PATIENCE_MS;
  for (let wait = 250; ; wait = Math.min(wait * 2, 4_000)) {
    try {
      const conn = await Connection.connect({ ...connection, connectTimeout: 5_000 });
      try {
        return await openOperations(new Client({ connection: conn, namespace }), taskQueue, {
          ...(deployment ? { deployment } : {}),
        });
      } finally {
        await conn.close();
      }
    } catch (err) {
      if (Date.now() + wait > until) throw err;
      await new Promise((resolve) => setTimeout(resolve, wait));
    }
  }
}
