// A small runner for the cluster described by cluster.ts, for trying it by hand until the
// project's supervisor runs it: set-up, start in dependency order, a smoke test through
// the frontend (and optionally the whole retrysafe stack on top), then stop in reverse.
// With --keep it stays up, restarts a process that dies (after --restart-after) and logs
// each event with its time, which is how the crash drills in README.md were run.
//
//   npx tsx tools/cluster/try.ts [--data .data/cluster] [--base-port 7233|auto] [--reset]
//       [--stack] [--keep] [--restart-after 2000] [--log-level warn] [--no-ui]
import { appendFileSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Client, Connection, WorkflowNotFoundError } from '@temporalio/client';
import { execa, type ResultPromise } from 'execa';
import { defineCluster, type ClusterDefinition, type ClusterProcess, type SetupPhase } from './cluster.js';
import type { ServerLogLevel } from './config.js';
import { PART_ENTRY, partEnv, STACK_PARTS, type StackDescription } from '../stack-env.js';
import { httpOk } from './health.js';
import { findFreeBase } from './ports.js';
import { startInWaves } from './waves.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const started = Date.now();

const { values: flags } = parseArgs({
  options: {
    data: { type: 'string', default: join(ROOT, '.data', 'cluster') },
    'base-port': { type: 'string', default: '7233' },
    reset: { type: 'boolean', default: false },
    stack: { type: 'boolean', default: false },
    keep: { type: 'boolean', default: false },
    'restart-after': { type: 'string', default: '2000' },
    'log-level': { type: 'string', default: 'warn' },
    'no-ui': { type: 'boolean', default: false },
    'ready-timeout': { type: 'string', default: '180000' },
  },
  strict: true,
});

const dataDir = resolve(flags.data);
const logDir = join(dataDir, 'logs');
const eventsFile = join(dataDir, 'events.log');

function event(message: string): void {
  const line = `${new Date().toISOString()} +${((Date.now() - started) / 1000).toFixed(3)}s ${message}`;
  console.log(line);
  appendFileSync(eventsFile, line + '\n');
}

function portFree(port: number): Promise<boolean> {
  return new Promise((done) => {
    const srv = createServer();
    srv.once('error', () => done(false));
    srv.listen({ host: '127.0.0.1', port, exclusive: true }, () => srv.close(() => done(true)));
  });
}

async function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const srv = createServer();
    srv.once('error', fail);
    srv.listen({ host: '127.0.0.1', port: 0 }, () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => done(port));
    });
  });
}

interface Running {
  spec: Pick<ClusterProcess, 'name' | 'file' | 'args' | 'env' | 'cwd' | 'uid' | 'gid' | 'stopSignal' | 'stopGraceMs'>;
  child: ResultPromise;
  stopping: boolean;
  exited: boolean;
}

const running = new Map<string, Running>();
let shuttingDown = false;

function writePids(): void {
  const pids = Object.fromEntries([...running].map(([name, r]) => [name, r.child.pid]));
  writeFileSync(join(dataDir, 'pids.json'), JSON.stringify(pids, null, 2) + '\n');
}

function spawn(spec: Running['spec']): Running {
  const log = join(logDir, `${spec.name}.log`);
  const child = execa(spec.file, spec.args, {
    cwd: spec.cwd,
    env: spec.env,
    ...(spec.uid !== undefined ? { uid: spec.uid, gid: spec.gid } : {}),
    stdin: 'ignore',
    stdout: { file: log, append: true },
    stderr: { file: log, append: true },
    reject: false,
    cleanup: true,
    killSignal: spec.stopSignal,
    forceKillAfterDelay: spec.stopGraceMs,
  });
  const r: Running = { spec, child, stopping: false, exited: false };
  running.set(spec.name, r);
  writePids();
  event(`${spec.name} started (pid ${child.pid})`);
  void child.then((res) => {
    r.exited = true;
    const how = res.signal ? `killed by ${res.signal}` : `exited with code ${res.exitCode}`;
    event(`${spec.name} ${how}${r.stopping ? '' : ' (unexpected)'}`);
    if (!r.stopping && !shuttingDown && flags.keep) {
      const delay = Number(flags['restart-after']);
      setTimeout(() => {
        if (!shuttingDown && running.get(spec.name) === r) {
          const again = spawn(spec);
          const def = cluster.processes.find((p) => p.name === spec.name);
          if (def)
            void waitReady(def, again).then(
              (ms) => event(`${spec.name} ready again after ${ms} ms`),
              (e: Error) => event(e.message),
            );
        }
      }, delay);
    }
  });
  return r;
}

async function waitReady(p: ClusterProcess, r: Running): Promise<number> {
  const t0 = Date.now();
  const deadline = t0 + Number(flags['ready-timeout']);
  for (;;) {
    if (r.exited) throw new Error(`${p.name} exited before it was ready (see ${join(logDir, `${p.name}.log`)})`);
    if (await p.ready.check()) return Date.now() - t0;
    if (Date.now() > deadline) throw new Error(`${p.name} not ready: waiting for ${p.ready.description}`);
    await sleep(200);
  }
}

async function stop(name: string): Promise<void> {
  const r = running.get(name);
  if (!r || r.exited) return;
  r.stopping = true;
  const t0 = Date.now();
  r.child.kill(r.spec.stopSignal);
  await r.child;
  event(`${name} stopped in ${Date.now() - t0} ms`);
}

async function runSteps(def: ClusterDefinition, phase: SetupPhase): Promise<void> {
  for (const step of def.setup.filter((s) => s.phase === phase)) {
    const t0 = Date.now();
    const note = await step.run();
    event(`set-up ${step.name}: ${note} (${Date.now() - t0} ms)`);
  }
}

/** Starts every process once those it depends on are ready; independent ones start together. */
async function startAll(def: ClusterDefinition): Promise<void> {
  await startInWaves(
    def.processes,
    async (p) => {
      const ms = await waitReady(p, spawn(p));
      event(`${p.name} ready in ${ms} ms`);
    },
    () => runSteps(def, 'postgres-ready'),
  );
}

/** Proves the frontend → history → matching path without any worker of ours. */
async function smokeTest(def: ClusterDefinition): Promise<void> {
  const connection = await Connection.connect({ address: def.frontendAddress });
  try {
    const client = new Client({ connection, namespace: def.namespace });
    const ns = await connection.workflowService.describeNamespace({ namespace: def.namespace });
    const taskQueue = `cluster-smoke-${Date.now()}`;
    const handle = await client.workflow.start('clusterSmokeTest', { taskQueue, workflowId: taskQueue, args: [] });
    const desc = await handle.describe();
    // The first workflow task sits in matching: the queue's backlog or its partition shows it.
    const tq = await connection.workflowService.describeTaskQueue({ namespace: def.namespace, taskQueue: { name: taskQueue } });
    await handle.terminate('smoke test');
    let visible = false;
    for (let i = 0; i < 50 && !visible; i++) {
      visible = (await client.workflow.count(`WorkflowId = '${taskQueue}'`)).count === 1;
      if (!visible) await sleep(200);
    }
    event(
      `smoke test: namespace ${ns.namespaceInfo?.name} (retention ${ns.config?.workflowExecutionRetentionTtl?.seconds} s), ` +
        `workflow ${desc.workflowId} ${desc.status.name} then terminated, task queue described (${tq.pollers?.length ?? 0} pollers), visible in visibility: ${visible}`,
    );
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) throw new Error('smoke test: workflow not found right after start');
    throw err;
  } finally {
    await connection.close();
  }
}

interface StackPorts {
  bank: number;
  reservations: number;
  api: number;
}

/** The project's own processes on top of the cluster, unchanged, pointed at it by TEMPORAL_* variables. */
async function startStack(def: ClusterDefinition): Promise<StackPorts> {
  const ports = { bank: await freePort(), reservations: await freePort(), api: await freePort() };
  const stackDir = join(dataDir, 'stack');
  mkdirSync(stackDir, { recursive: true });
  const base = { ...process.env, ...def.clientEnv, LOG_LEVEL: 'warn' };
  const node = (name: string, entry: string, env: Record<string, string>) => ({
    name,
    file: process.execPath,
    args: ['--import', 'tsx', entry],
    env: { ...base, ...env } as Record<string, string>,
    cwd: ROOT,
    stopSignal: 'SIGTERM' as const,
    stopGraceMs: 10_000,
  });
  // Temporal and the task queue come from the cluster's client variables and the defaults.
  const stack: StackDescription = {
    bank: { port: ports.bank, db: join(stackDir, 'bank.db') },
    reservations: { port: ports.reservations, db: join(stackDir, 'reservations.db') },
    worker: { metricsAddress: 'off' },
    api: { port: ports.api },
  };
  const parts = STACK_PARTS.map((name) => node(name, PART_ENTRY[name], partEnv(stack, name)));
  const probes: Record<string, () => Promise<boolean>> = {
    bank: () => httpOk(`http://127.0.0.1:${ports.bank}/accounts/acc_alice`),
    reservations: () => httpOk(`http://127.0.0.1:${ports.reservations}/inventory/sku_book`),
    // The worker says nothing over HTTP; its poller on the task queue is what counts.
    worker: () => pollerPresent(def, 'retrysafe'),
    api: () => httpOk(`http://127.0.0.1:${ports.api}/readyz`),
  };
  for (const part of parts) {
    const r = spawn(part);
    const t0 = Date.now();
    for (;;) {
      if (r.exited) throw new Error(`${part.name} exited (see ${join(logDir, `${part.name}.log`)})`);
      if (await probes[part.name]!()) break;
      if (Date.now() - t0 > 60_000) throw new Error(`${part.name} not ready`);
      await sleep(200);
    }
    event(`${part.name} ready in ${Date.now() - t0} ms`);
  }
  writeFileSync(join(dataDir, 'stack.json'), JSON.stringify(ports) + '\n');
  return ports;
}

async function pollerPresent(def: ClusterDefinition, taskQueue: string): Promise<boolean> {
  const connection = await Connection.connect({ address: def.frontendAddress });
  try {
    const tq = await connection.workflowService.describeTaskQueue({ namespace: def.namespace, taskQueue: { name: taskQueue } });
    return (tq.pollers?.length ?? 0) > 0;
  } catch {
    return false;
  } finally {
    await connection.close();
  }
}

async function payment(ports: StackPorts, key: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`http://127.0.0.1:${ports.api}/v1/payments`, {
    method: 'POST',
    headers: { 'Idempotency-Key': key, 'Content-Type': 'application/json', Prefer: 'wait=30' },
    body: JSON.stringify({ account: 'acc_alice', amount: 1250, currency: 'EUR' }),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

async function shutdown(): Promise<void> {
  shuttingDown = true;
  for (const name of [...running.keys()].reverse()) await stop(name);
}

const cluster = defineCluster({
  root: ROOT,
  dataDir,
  basePort: flags['base-port'] === 'auto' ? await findFreeBase() : Number(flags['base-port']),
  logLevel: flags['log-level'] as ServerLogLevel,
  ui: !flags['no-ui'],
});

async function main(): Promise<void> {
  if (flags.reset) rmSync(dataDir, { recursive: true, force: true });
  mkdirSync(logDir, { recursive: true });
  event(`cluster in ${dataDir}, frontend ${cluster.frontendAddress}, ports ${JSON.stringify(cluster.ports)}`);
  for (const p of cluster.processes) {
    for (const use of p.ports) {
      if (!(await portFree(use.port))) throw new Error(`${use.part} ${use.what} port ${use.port} is in use`);
    }
  }
  // `on`, not `once`: execa's exit hook re-raises a signal that has no other listener left,
  // which would kill this runner before it has stopped its children in order.
  for (const [signal, code] of [
    ['SIGINT', 130],
    ['SIGTERM', 143],
  ] as const) {
    process.on(signal, () => {
      if (!shuttingDown) void shutdown().then(() => process.exit(code));
    });
  }

  await runSteps(cluster, 'before-start');
  const t0 = Date.now();
  await startAll(cluster);
  event(`all processes ready in ${Date.now() - t0} ms`);
  await runSteps(cluster, 'cluster-ready');
  event(`cluster ready in ${Date.now() - t0} ms (from the first process start)`);
  await smokeTest(cluster);

  if (flags.stack) {
    const ports = await startStack(cluster);
    const key = `cluster-try-${Date.now()}`;
    const first = await payment(ports, key);
    const again = await payment(ports, key);
    event(
      `payment ${key}: HTTP ${first.status} ${String(first.body.status)} chargeId ${String((first.body.result as { chargeId?: string } | undefined)?.chargeId)}; ` +
        `retry: HTTP ${again.status} ${String(again.body.status)} (same charge: ${JSON.stringify(first.body.result) === JSON.stringify(again.body.result)})`,
    );
    if (first.status !== 200 || first.body.status !== 'succeeded')
      throw new Error(`payment did not succeed: ${JSON.stringify(first.body)}`);
  }

  if (flags.keep) {
    event(
      `up: TEMPORAL_ADDRESS=${cluster.frontendAddress}${cluster.uiUrl ? `, UI ${cluster.uiUrl}` : ''}; pids in ${join(dataDir, 'pids.json')}; Ctrl-C stops`,
    );
    await new Promise(() => undefined);
  }
  await shutdown();
}

main().catch(async (err) => {
  event(`failed: ${(err as Error).message}`);
  await shutdown();
  process.exit(1);
});
