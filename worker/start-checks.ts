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
import type { OperationRegistry } from '../workflows/registry.js';
import { openOperations, unrunnable } from './open-operations.js';

/** The worker's own definitions against what it has. */
export function definitionProblems(registry: OperationRegistry, has: ProgramNeeds): string[] {
  return [
    ...registry.declaredServices
      .filter((s) => !has.services.includes(s))
      .map((s) => `RETRYSAFE_SERVICES has no base URL for service ${s}, which an operation calls`),
    ...registry.activityNames
      .filter((a) => !has.activities.includes(a))
      .map((a) => `no activities.ts of RETRYSAFE_OPERATIONS registers the activity ${a}, which an operation calls`),
  ];
}

/** Refuses to start when an open operation of the task queue needs what this worker lacks (one visibility query per version in flight). */
export async function checkOpenOperations(
  connection: ConnectionOptions,
  namespace: string,
  taskQueue: string,
  has: ProgramNeeds,
  registry: OperationRegistry,
): Promise<void> {
  const conn = await Connection.connect(connection);
  try {
    const open = await openOperations(new Client({ connection: conn, namespace }), taskQueue);
    const problems = unrunnable(open, has, registry.types);
    if (problems.length > 0) {
      throw new ConfigError([
        `open operations on task queue ${taskQueue} need what this worker lacks; give it what they need, or let a worker that has it finish them:`,
        ...problems,
      ]);
    }
  } finally {
    await conn.close();
  }
}
