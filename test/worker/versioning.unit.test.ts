// A worker runs as one build of a Worker Deployment only when told to: its variables, what
// it hands the SDK, and what it tells an operator whose build gets no operations yet.
import { describe, expect, it } from 'vitest';
import { loadWorkerConfig } from '../../worker/config.js';
import { workflowSourceHash } from '../../worker/bundle.js';
import { deploymentOptions, routingNote } from '../../worker/versioning.js';
import { problemsOf } from '../support/config-problems.js';

describe('RETRYSAFE_DEPLOYMENT_NAME and RETRYSAFE_BUILD_ID', () => {
  it('leave the worker unversioned when unset (or empty)', () => {
    expect(loadWorkerConfig({}).versioning).toBeUndefined();
    expect(loadWorkerConfig({ RETRYSAFE_DEPLOYMENT_NAME: '', RETRYSAFE_BUILD_ID: '' }).versioning).toBeUndefined();
  });

  it('version the worker with a deployment name, the build ID left to the bundle hash', () => {
    expect(loadWorkerConfig({ RETRYSAFE_DEPLOYMENT_NAME: 'retrysafe' }).versioning).toEqual({
      deploymentName: 'retrysafe',
      buildId: undefined,
    });
    expect(
      loadWorkerConfig({ RETRYSAFE_DEPLOYMENT_NAME: 'retrysafe_eu-1', RETRYSAFE_BUILD_ID: 'v2.3.0+g1a2b3c' }).versioning,
    ).toEqual({ deploymentName: 'retrysafe_eu-1', buildId: 'v2.3.0+g1a2b3c' });
  });

  it.each([
    ['a dot, which joins a name to a build ID', 'retry.safe'],
    ['a colon, the older separator', 'retrysafe:a'],
    ["the reserved '__'", '__retrysafe'],
    ['a space', 'retry safe'],
    ['101 characters', 'r'.repeat(101)],
  ])('refuses a deployment name with %s, naming the variable', (_, value) => {
    const problems = problemsOf(() => loadWorkerConfig({ RETRYSAFE_DEPLOYMENT_NAME: value }));
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(/^RETRYSAFE_DEPLOYMENT_NAME=".*": must be 1-100 letters, digits, '_' or '-'/);
  });

  it.each([
    ["the reserved '__'", '__build'],
    ['a slash', 'release/2'],
    ['a space', 'build 2'],
    ['101 characters', 'b'.repeat(101)],
  ])('refuses a build ID with %s, naming the variable', (_, value) => {
    const problems = problemsOf(() => loadWorkerConfig({ RETRYSAFE_DEPLOYMENT_NAME: 'retrysafe', RETRYSAFE_BUILD_ID: value }));
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(/^RETRYSAFE_BUILD_ID=".*": must be .*not starting with '__'/);
  });

  it('refuses a build ID without a deployment name', () => {
    expect(problemsOf(() => loadWorkerConfig({ RETRYSAFE_BUILD_ID: 'b2' }))).toEqual([
      expect.stringMatching(/^RETRYSAFE_BUILD_ID is set without RETRYSAFE_DEPLOYMENT_NAME/),
    ]);
  });

  it('reports a bad name beside the other bad variables, once', () => {
    const problems = problemsOf(() =>
      loadWorkerConfig({ RETRYSAFE_DEPLOYMENT_NAME: 'a.b', RETRYSAFE_BUILD_ID: 'b2', DOWNSTREAM_TIMEOUT: 'soon' }),
    );
    expect(problems.map((p) => p.split('=')[0])).toEqual(['DOWNSTREAM_TIMEOUT', 'RETRYSAFE_DEPLOYMENT_NAME']);
  });
});

describe('a versioned worker', () => {
  const version = { deploymentName: 'retrysafe', buildId: 'b2' };

  it('pins the operations it starts to its build', () => {
    expect(deploymentOptions(version)).toEqual({ version, useWorkerVersioning: true, defaultVersioningBehavior: 'PINNED' });
  });

  it('has a default build ID that follows the workflow code', () => {
    expect(workflowSourceHash([])).toMatch(/^[0-9a-f]{20}$/);
    expect(workflowSourceHash([])).toBe(workflowSourceHash([]));
  });

  it('says nothing when it is current, or ramping above 0 %', () => {
    expect(routingNote(version, { current: 'b2' })).toBeUndefined();
    expect(routingNote(version, { current: 'b1', ramping: { buildId: 'b2', percentage: 10 } })).toBeUndefined();
  });

  it('tells the operator where new operations go, and the command that sends them here', () => {
    const command = 'temporal worker deployment set-current-version --deployment-name retrysafe --build-id b2';
    expect(routingNote(version, {})).toBe(
      `build b2 of deployment retrysafe is neither current nor ramping: new operations go to unversioned workers (no build is current). Make it current with: ${command}`,
    );
    expect(routingNote(version, { current: 'b1', ramping: { buildId: 'b2', percentage: 0 } })).toContain(
      'new operations go to build b1.',
    );
  });
});
