// Worker Deployment Versioning: how retrysafe's own workflow code (the interpreter, not the
// definitions, which each operation carries in its input) is rolled. A versioned worker is
// one build of a deployment; Temporal routes each new operation to the deployment's current
// (or ramping) build and keeps it PINNED there until it ends, so an operation never meets an
// interpreter other than the one that recorded its history. A build gets operations only
// once an operator makes it current or ramping (`temporal worker deployment
// set-current-version`): this says so at start when it is neither.
import type { WorkerDeploymentOptions } from '@temporalio/worker';
import type { WorkflowService } from '@temporalio/client';

export interface DeploymentVersion {
  deploymentName: string;
  buildId: string;
}

export function deploymentOptions(version: DeploymentVersion): WorkerDeploymentOptions {
  return { version, useWorkerVersioning: true, defaultVersioningBehavior: 'PINNED' };
}

/** Where the deployment sends new operations; none before any build was made current. */
export interface Routing {
  current?: string;
  ramping?: { buildId: string; percentage: number };
}

const NOT_FOUND = 5;

/** The deployment's routing as the server has it now (a deployment no worker polled yet has none). */
export async function routingOf(service: WorkflowService, namespace: string, deploymentName: string): Promise<Routing> {
  try {
    const { workerDeploymentInfo } = await service.describeWorkerDeployment({ namespace, deploymentName });
    const routing = workerDeploymentInfo?.routingConfig;
    const current = routing?.currentDeploymentVersion?.buildId;
    const ramping = routing?.rampingDeploymentVersion?.buildId;
    return {
      ...(current ? { current } : {}),
      ...(ramping ? { ramping: { buildId: ramping, percentage: routing?.rampingVersionPercentage ?? 0 } } : {}),
    };
  } catch (err) {
    if ((err as { code?: number }).code === NOT_FOUND) return {};
    throw err;
  }
}

/** What an operator should know when this build is not the one new operations go to. */
export function routingNote(version: DeploymentVersion, routing: Routing): string | undefined {
  if (routing.current === version.buildId) return undefined;
  if (routing.ramping?.buildId === version.buildId && routing.ramping.percentage > 0) return undefined;
  const now = routing.current ? `build ${routing.current}` : 'unversioned workers (no build is current)';
  return (
    `build ${version.buildId} of deployment ${version.deploymentName} is neither current nor ramping: new operations go to ${now}. ` +
    `Make it current with: temporal worker deployment set-current-version --deployment-name ${version.deploymentName} --build-id ${version.buildId}`
  );
}
