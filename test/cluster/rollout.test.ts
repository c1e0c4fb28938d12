// Rolling retrysafe's own workflow code (the interpreter) on the multi-process cluster,
// with Temporal's Worker Deployment Versioning, driven by the `temporal worker deployment`
// commands docs/operating.md shows. Build A (this repository) is made current and gets
// operations that block mid-flight (the bank down). Build B is this repository with an
// interpreter that issues one more command (a timer before the first step): replayed
// against A's histories it fails, which is why a changed interpreter needs a version. B is
// ramped, then made current; new operations run on B while A's keep running on A, pinned;
// every one ends on the build it started on, A is seen drained and is stopped.
import { execFile } from 'node:child_process';
import { chmodSync, cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client, Connection } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { Worker } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChaosStack } from '../../tools/chaos/stack.js';
import { loopbackUrl, PART_ENTRY, partEnv, type StackDescription } from '../../tools/stack-env.js';
import type { Part } from '../../tools/supervisor/part.js';
import { freePort } from '../../tools/supervisor/ports.js';
import { ensureTemporalCli } from '../../tools/temporal-cli.js';
import { BUNDLE_CACHE_DIR, workflowSourceHash } from '../../worker/bundle.js';
import { downstreamKey } from '../../workflows/identity.js';
import { startBank, type BankHandle } from '../support/stack.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const DEPLOYMENT = 'retrysafe';
const TASK_QUEUE = 'retrysafe-rollout';
const ACCOUNT = 'acc_rollout';
const { EventType, VersioningBehavior } = temporal.api.enums.v1;
const execFileAsync = promisify(execFile);

let dir: string;
let stack: ChaosStack;
let bank: BankHandle;
let apiUrl: string;
let connection: Connection;
let client: Client;
const workerEnv: Record<string, string> = {};
/** The build each operation started on, as the engine said once its first workflow task completed. */
const startedOn = new Map<string, string>();
const builds = { a: '', b: '' };
const workers: Record<'a' | 'b', Part | undefined> = { a: undefined, b: undefined };
const readyFields: Record<string, Record<string, unknown>> = {};
let run = 0;

const say = (line: string) => console.log(`[rollout] ${line}`);

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'retrysafe-rollout-'));
  mkdirSync(join(dir, 'logs'));
  // PostgreSQL runs as its own user when we are root: it must be able to reach its folder.
  chmodSync(dir, 0o755);
  stack = new ChaosStack(dir, say);
  await stack.startTemporal('cluster');
  bank = await startBank({ faults: true, dbFile: join(dir, 'bank.db') });
  await bank.openAccount(ACCOUNT, 10_000_000);
  const port = await freePort();
  const described: StackDescription = {
    temporal: { address: stack.temporalAddress, namespace: 'default' },
    taskQueue: TASK_QUEUE,
    bank: { url: bank.url },
    reservations: { url: 'http://127.0.0.1:9' },
    worker: { metricsAddress: 'off', downstreamTimeout: '2s' },
    api: { host: '127.0.0.1', port, limitsDb: join(dir, 'limits.db') },
  };
  Object.assign(workerEnv, partEnv(described, 'worker', { RETRYSAFE_DEPLOYMENT_NAME: DEPLOYMENT }));
  // A step waits for the bank for as long as the roll takes, instead of being fenced.
  const api = stack.addPart(
    'api',
    PART_ENTRY.api,
    partEnv(described, 'api', { RETRYSAFE_STEP_DEADLINE: '15m' }),
    'api listening',
    () => undefined,
    70_000,
  );
  await api.start();
  apiUrl = loopbackUrl(port);
  connection = await Connection.connect({ address: stack.temporalAddress });
  client = new Client({ connection, namespace: 'default' });
}, 1_800_000);

afterAll(async () => {
  await connection?.close();
  await stack?.stop();
  await bank?.close();
  rmSync(dir, { recursive: true, force: true });
}, 180_000);

const printed = new Map<string, string>();

/** One `temporal worker deployment` command against the cluster, printed with what it answered. */
async function deployment(...args: string[]): Promise<Record<string, unknown>> {
  const argv = ['worker', 'deployment', ...args, '--address', stack.temporalAddress, '--namespace', 'default', '-o', 'json'];
  const { stdout } = await execFileAsync(ensureTemporalCli(), argv, { timeout: 60_000 });
  // A status polled again is printed only when it changed.
  const command = `$ temporal worker deployment ${args.join(' ')}`;
  if (printed.get(command) !== stdout) say(`${command}\n${stdout.trim()}`);
  printed.set(command, stdout);
  return stdout.trim().startsWith('{') ? (JSON.parse(stdout) as Record<string, unknown>) : {};
}

async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 120_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined) return value;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) throw new Error(`${what} within ${timeoutMs / 1000} s${last ? `: ${String(last)}` : ''}`);
    await sleep(1_000);
  }
}

/** Starts worker build `which` from `entry` and returns its build ID, as it logged it. */
async function startBuild(which: 'a' | 'b', entry: string): Promise<string> {
  const name = `worker-${which}`;
  const part = stack.addPart(name, entry, workerEnv, 'worker ready', (e) => {
    const fields = e as Record<string, unknown>;
    if (fields.msg === 'worker ready') readyFields[name] = fields;
  });
  workers[which] = part;
  await part.start();
  const ready = readyFields[name]!;
  expect(ready).toMatchObject({ deployment: DEPLOYMENT, versioning: 'pinned', taskQueue: TASK_QUEUE });
  return String(ready.buildId);
}

/** Until worker build `which` printed a line with `text`. */
const logged = (which: 'a' | 'b', text: string) =>
  until(
    `worker-${which} to log "${text}"`,
    () => Promise.resolve(workers[which]!.output.some((l) => l.includes(text)) || undefined),
    30_000,
  );

/**
 * retrysafe as a release whose interpreter differs: this repository's code, with one timer
 * before the first step of every operation. No `patched()` guards it, on purpose: only the
 * versions keep it from meeting a history recorded without it.
 */
function releaseWithChangedInterpreter(into: string): string {
  for (const folder of ['workflows', 'activities', 'worker', 'common', 'downstream'])
    cpSync(join(ROOT, folder), join(into, folder), { recursive: true });
  for (const file of ['package.json', 'tsconfig.json']) cpSync(join(ROOT, file), join(into, file));
  symlinkSync(join(ROOT, 'node_modules'), join(into, 'node_modules'), 'dir');
  const file = join(into, 'workflows', 'operation.ts');
  const source = readFileSync(file, 'utf8');
  const start = /export async function runOperation\([^)]*\)[^{]*\{/;
  if (!start.test(source)) throw new Error('workflows/operation.ts declares no runOperation: change build B with it');
  const changed = source.replace(start, (head) => `${head}\n  await pauseOfBuildB(1);`);
  writeFileSync(file, `import { sleep as pauseOfBuildB } from '@temporalio/workflow';\n${changed}`);
  return join(into, 'worker', 'main.ts');
}

/** A payment through the API; its workflow ID. `wait`: the seconds the POST waits for its end. */
async function pay(wait = 1): Promise<{ workflowId: string; status: number; body: Record<string, unknown> }> {
  const key = `rollout-${process.pid}-${++run}`;
  const res = await fetch(`${apiUrl}/v1/payments`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'idempotency-key': key, prefer: `wait=${wait}` },
    body: JSON.stringify({ account: ACCOUNT, amount: 100 + run, currency: 'EUR' }),
    signal: AbortSignal.timeout(90_000),
  });
  return { workflowId: `default/${key}`, status: res.status, body: (await res.json()) as Record<string, unknown> };
}

/** The build an operation is pinned to, once its first workflow task completed. */
async function pinnedBuild(workflowId: string): Promise<string> {
  const build = await until(`${workflowId} to be pinned`, async () => {
    const info = (await client.workflow.getHandle(workflowId).describe()).raw.workflowExecutionInfo?.versioningInfo;
    if (!info?.deploymentVersion?.buildId) return undefined;
    expect(info.behavior).toBe(VersioningBehavior.VERSIONING_BEHAVIOR_PINNED);
    expect(info.deploymentVersion.deploymentName).toBe(DEPLOYMENT);
    return info.deploymentVersion.buildId;
  });
  startedOn.set(workflowId, build);
  return build;
}

/** Operations whose charge is being tried (the bank is down), each pinned; their builds. */
async function startBlocked(count: number): Promise<string[]> {
  const started = await Promise.all(Array.from({ length: count }, () => pay()));
  expect(started.map((s) => s.status)).toEqual(started.map(() => 202));
  const ids = started.map((s) => s.workflowId);
  await Promise.all(
    ids.map((id) =>
      until(`${id} to try its charge`, async () => {
        const pending = (await client.workflow.getHandle(id).describe()).raw.pendingActivities ?? [];
        return pending.length > 0 ? true : undefined;
      }),
    ),
  );
  return Promise.all(ids.map((id) => pinnedBuild(id)));
}

/** `temporal workflow list --query`: the workflow IDs it lists. */
async function listWorkflows(query: string): Promise<string[]> {
  const argv = ['workflow', 'list', '--query', query, '--address', stack.temporalAddress, '-o', 'json'];
  const text = (await execFileAsync(ensureTemporalCli(), argv, { timeout: 60_000 })).stdout.trim();
  // A JSON array, or one object a line.
  const rows = text.startsWith('[')
    ? (JSON.parse(text) as unknown[])
    : text
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as unknown);
  return rows.map((row) => (row as { execution: { workflowId: string } }).execution.workflowId);
}

/** A build's drainage status, as `describe-version` shows it ("" while it is current or ramping). */
async function drainage(buildId: string): Promise<string> {
  const answer = await deployment('describe-version', '--deployment-name', DEPLOYMENT, '--build-id', buildId);
  return String((answer as { drainageInfo?: { drainageStatus?: string } }).drainageInfo?.drainageStatus ?? '').toLowerCase();
}

describe('rolling the interpreter with two worker deployment versions', () => {
  it('build A, made current, gets the new operations, pinned to it', async () => {
    builds.a = await startBuild('a', PART_ENTRY.worker);
    // The default build ID is the bundle's content hash: this repository's workflow code.
    expect(builds.a).toBe(workflowSourceHash([]));
    await logged('a', 'new operations go to unversioned workers (no build is current)');
    await until('build A to register', () =>
      deployment('describe-version', '--deployment-name', DEPLOYMENT, '--build-id', builds.a),
    );
    await deployment('set-current-version', '--deployment-name', DEPLOYMENT, '--build-id', builds.a, '--yes');
    await bank.setFaults({ down: true });
    expect(await startBlocked(3)).toEqual([builds.a, builds.a, builds.a]);
  }, 600_000);

  it("build B's interpreter is a real change: A's histories fail to replay on it", async () => {
    builds.b = await startBuild('b', releaseWithChangedInterpreter(join(dir, 'release-b')));
    expect(builds.b).not.toBe(builds.a);
    await logged('b', `new operations go to build ${builds.a}.`);
    const [old] = [...startedOn.keys()];
    const history = await client.workflow.getHandle(old!).fetchHistory();
    const bundle = (build: string) => ({ codePath: join(BUNDLE_CACHE_DIR, `workflow-bundle-${build}.js`) });
    await Worker.runReplayHistory({ workflowBundle: bundle(builds.a) }, history, old);
    await expect(Worker.runReplayHistory({ workflowBundle: bundle(builds.b) }, history, old)).rejects.toMatchObject({
      name: 'DeterminismViolationError',
    });
  }, 600_000);

  it("B ramped, then made current, gets the new operations; A's keep running on A", async () => {
    await deployment(
      'set-ramping-version',
      '--deployment-name',
      DEPLOYMENT,
      '--build-id',
      builds.b,
      '--percentage',
      '50',
      '--yes',
    );
    const ramped = await startBlocked(4);
    for (const build of ramped) expect([builds.a, builds.b]).toContain(build);
    say(`at 50 %: ${ramped.filter((b) => b === builds.b).length} of ${ramped.length} new operations on B`);
    await deployment('set-current-version', '--deployment-name', DEPLOYMENT, '--build-id', builds.b, '--yes');
    const described = await deployment('describe', '--name', DEPLOYMENT);
    expect(JSON.stringify(described)).toContain(builds.b);
    expect(await startBlocked(3)).toEqual([builds.b, builds.b, builds.b]);
    // What still holds A, as an operator finds it.
    const query = `TemporalWorkerDeploymentVersion = "${DEPLOYMENT}:${builds.a}" AND ExecutionStatus = "Running"`;
    const onA = [...startedOn].filter(([, build]) => build === builds.a).map(([id]) => id);
    const listed = await until('the list of what holds A', async () => {
      const ids = await listWorkflows(query);
      return ids.length === onA.length ? ids : undefined;
    });
    expect(listed.sort()).toEqual(onA.sort());
    say(`temporal workflow list --query '${query}': ${onA.length} operations`);
    await until('A to be draining', async () => (await drainage(builds.a)) === 'draining' || undefined);
  }, 600_000);

  it('every operation ends on the build it started on, charged once', async () => {
    await bank.setFaults({ down: false });
    const shown = new Set<string>();
    for (const [workflowId, build] of startedOn) {
      const handle = client.workflow.getHandle(workflowId);
      const outcome = (await until(
        `${workflowId} to end`,
        async () => {
          const d = await handle.describe();
          return d.status.name === 'RUNNING' ? undefined : await handle.result();
        },
        240_000,
      )) as { status: string };
      expect(outcome.status, workflowId).toBe('succeeded');
      const events = (await handle.fetchHistory()).events ?? [];
      const completedBy = events
        .filter((e) => e.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED)
        .map((e) => e.workflowTaskCompletedEventAttributes?.deploymentVersion?.buildId);
      expect(new Set(completedBy), workflowId).toEqual(new Set([build]));
      const timers = events.filter((e) => e.eventType === EventType.EVENT_TYPE_TIMER_STARTED).length;
      expect(timers > 0, `${workflowId}: B's timer`).toBe(build === builds.b);
      // Its activities too ran on its build's worker (the SDK's identity is <pid>@<host>).
      const ranBy = events
        .filter((e) => e.eventType === EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED)
        .map((e) => e.activityTaskStartedEventAttributes?.identity?.split('@')[0]);
      expect(ranBy.length, workflowId).toBeGreaterThan(0);
      expect(new Set(ranBy), workflowId).toEqual(new Set([String(workers[build === builds.a ? 'a' : 'b']!.pid)]));
      const described = await handle.describe();
      const attribute = described.searchAttributes.TemporalWorkerDeploymentVersion;
      expect(String(attribute), workflowId).toContain(build);
      if (!shown.has(build)) {
        shown.add(build);
        const { versioningInfo } = described.raw.workflowExecutionInfo ?? {};
        say(
          `${workflowId}: versioningInfo ${JSON.stringify(versioningInfo)}, TemporalWorkerDeploymentVersion ${JSON.stringify(attribute)}`,
        );
      }
      const charge = await bank.charge(downstreamKey(workflowId, 'charge'));
      expect(charge.body, workflowId).toMatchObject({ status: 'captured' });
    }
    say(`ended: ${[...startedOn].map(([id, b]) => `${id} on ${b === builds.a ? 'A' : 'B'}`).join(', ')}`);
  }, 600_000);

  it('A drains once its operations ended, and is stopped', async () => {
    await until('A to be drained', async () => (await drainage(builds.a)) === 'drained' || undefined, 300_000);
    await stack.stopPart('worker-a');
    // The server remembers a build's pollers for minutes after its workers stopped.
    const deleted = deployment('delete-version', '--deployment-name', DEPLOYMENT, '--build-id', builds.a);
    const refusal = await deleted.then(
      () => '',
      (err: { stderr?: string }) => String(err.stderr),
    );
    say(`delete-version of A right after its workers stopped: ${refusal.trim()}`);
    expect(refusal).toContain('cannot be deleted since it has active pollers');
    await deployment('list');
    await deployment('describe', '--name', DEPLOYMENT);
    // B alone serves what comes next.
    const next = await pay(60);
    expect(next.status).toBe(200);
    expect(next.body).toMatchObject({ status: 'succeeded' });
    expect(await pinnedBuild(next.workflowId)).toBe(builds.b);
  }, 600_000);
});
