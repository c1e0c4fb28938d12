// The CPU bench on a stack: one tuned Temporal dev server and the sandboxes, each variant's
// worker and API (and with --bare the plain-Temporal worker) on its own task queue, warmed
// up, then batches interleaved round by round with every process's CPU time read before
// and after each batch; the report, and the profiles' summaries, on stdout.
import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client, Connection } from '@temporalio/client';
import proto from '@temporalio/proto';
import { bundleWorkflowCode } from '@temporalio/worker';
import { startDevServer } from '../../dev-server.js';
import { quietLogger } from '../../quiet-logger.js';
import type { PartSpec } from '../../supervisor/part.js';
import {
  compiledEntry,
  downstreamEnv,
  loopbackUrl,
  PART_ENTRY,
  partEnv,
  temporalEnv,
  type StackDescription,
  type StackPartName,
} from '../../stack-env.js';
import { freePort } from '../../supervisor/ports.js';
import { httpProbe, type Probe } from '../../supervisor/ready.js';
import { Supervisor } from '../../supervisor/supervisor.js';
import { ensureTemporalCli } from '../../temporal-cli.js';
import { operationRef } from '../../../workflows/identity.js';
import type { BareHttpInput } from '../baseline/workflows.js';
import { httpClient } from '../http.js';
import { closedLoop } from '../load.js';
import { cpuMs } from '../proc.js';
import { requestFor, seedSandboxes, submit, TENANT } from '../scenarios/workload.js';
import { BASELINE_WORKFLOWS, benchProcess, ROOT, startSandboxes } from '../stack.js';
import { log } from './log.js';
import { BARE, type Options } from './options.js';
import { profileSummary } from './profile.js';
import { report, ROLES, type BatchRecord } from './report.js';
import { materialise } from './variants.js';

/** Ready once a worker polls `taskQueue`. */
function pollerProbe(client: Client, taskQueue: string): Probe {
  const WORKFLOW = proto.temporal.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW;
  return (ctx) =>
    ctx.poll(
      `a poller on ${taskQueue}`,
      async () => {
        const res = await client.workflowService.describeTaskQueue({
          namespace: 'default',
          taskQueue: { name: taskQueue },
          taskQueueType: WORKFLOW,
        });
        return (res.pollers?.length ?? 0) > 0;
      },
      250,
    );
}

/** One thing measured: a variant (its API and worker) or the bare baseline (this process as its client, and its worker). */
interface Target {
  name: string;
  /** Process ids by role: api, worker. */
  pids: Record<string, number>;
  run(type: string, key: string): Promise<void>;
}

function processCpu(pids: Record<string, number>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [name, pid] of Object.entries(pids)) {
    const ms = cpuMs(pid);
    if (ms !== undefined) out[name] = ms;
  }
  const own = process.cpuUsage();
  out.driver = (own.user + own.system) / 1000;
  return out;
}

export async function runOnStack(opts: Options): Promise<void> {
  const runId = Math.random().toString(36).slice(2, 8);
  const dataDir = join(ROOT, '.data', `cpu-${runId}`);
  const profileDir = join(dataDir, 'profiles');
  mkdirSync(dataDir, { recursive: true });
  const roots = opts.variants.map(materialise);
  const supervisor = new Supervisor();
  const http = httpClient(64);
  let connection: Connection | undefined;
  let sandboxes: Awaited<ReturnType<typeof startSandboxes>> | undefined;
  try {
    const port = await freePort();
    const temporal = await startDevServer({
      bin: ensureTemporalCli(),
      dbFile: join(dataDir, 'temporal.db'),
      port,
      headless: true,
      logLevel: 'warn',
      retentionMs: 24 * 3600_000,
      supervisor,
    });
    log(`Temporal on ${temporal.address}`);
    sandboxes = await startSandboxes({ dataDir, logLevel: opts.logLevel, plainBody: '{}' });
    const { bank, reservations } = sandboxes.urls;
    // The main bench's requests (one per type, read off its schema) and the resources they name.
    await seedSandboxes({ stack: sandboxes, http });
    connection = await Connection.connect({ address: temporal.address });
    const client = new Client({ connection, namespace: 'default' });

    const shared = { temporal: temporal.part.pid!, bank: sandboxes.pids.bank!, reservations: sandboxes.pids.reservations! };
    // What every variant's worker and API share: this Temporal and these sandboxes.
    const described: StackDescription = {
      temporal: { address: temporal.address, namespace: 'default' },
      bank: { url: bank },
      reservations: { url: reservations },
    };
    // A bench process run from a variant's folder; a product worker bundles its workflows as it
    // starts, so readiness may take minutes on a busy machine.
    const spec = (name: string, root: string, entry: string, env: Record<string, string>, ready: Probe): PartSpec => ({
      ...benchProcess(
        name,
        join(root, entry),
        { LOG_LEVEL: opts.logLevel, ...env },
        ready,
        opts.cpuProf.includes(name) ? ['--cpu-prof', '--cpu-prof-dir', join(profileDir, name)] : [],
      ),
      cwd: root,
      readyTimeoutMs: 180_000,
      keepLines: 200,
      onLine: (line, stream) => {
        if (stream === 'stderr' || /"level":(40|50|60)/.test(line)) log(`${name}: ${line.slice(0, 300)}`);
      },
    });

    const targets: Target[] = [];
    await Promise.all(
      opts.variants.map(async (variant, i) => {
        const root = roots[i]!;
        const taskQueue = `cpu-${variant.name}-${runId}`;
        const [apiPort, metricsPort] = [await freePort(), await freePort()];
        const js = (part: StackPartName) => (variant.compiled ? compiledEntry(PART_ENTRY[part]) : PART_ENTRY[part]);
        const stack: StackDescription = {
          ...described,
          taskQueue,
          worker: { metricsAddress: `127.0.0.1:${metricsPort}` },
          api: { host: '127.0.0.1', port: apiPort, limitsDb: join(dataDir, `${variant.name}-limits.db`) },
        };
        const worker = supervisor.add(
          spec(`${variant.name}.worker`, root, js('worker'), partEnv(stack, 'worker'), pollerProbe(client, taskQueue)),
        );
        const apiUrl = loopbackUrl(apiPort);
        const api = supervisor.add(
          spec(
            `${variant.name}.api`,
            root,
            js('api'),
            // The sandboxes' URLs are ignored by the API; a variant that runs its worker inside
            // the API process (to start workflows eagerly) reads them there.
            partEnv(stack, 'api', downstreamEnv(stack)),
            httpProbe(`${apiUrl}/healthz`),
          ),
        );
        await Promise.all([worker.start(), api.start()]);
        log(`variant ${variant.name}: worker and API up (${variant.compiled ? 'compiled' : 'tsx'})`);
        targets[i] = {
          name: variant.name,
          pids: { api: api.pid!, worker: worker.pid! },
          run: async (type, key) => {
            const { operation } = await submit(http, apiUrl, type, key, requestFor(type));
            if (operation.status !== 'succeeded')
              throw new Error(`${key} ${String(operation.status)}: ${JSON.stringify(operation.error)}`);
          },
        };
      }),
    );
    if (opts.bare) {
      // The main bench's fair baseline: its baseline worker running bareHttp, which makes each
      // step's own call through retrysafe's activities with the keys retrysafe derives.
      const taskQueue = `cpu-bare-${runId}`;
      const bundle = join(dataDir, 'baseline-bundle.js');
      writeFileSync(bundle, (await bundleWorkflowCode({ workflowsPath: BASELINE_WORKFLOWS, logger: quietLogger() })).code);
      const worker = supervisor.add(
        spec(
          'bare.worker',
          ROOT,
          'tools/bench/processes/worker.ts',
          {
            ...temporalEnv(described),
            ...downstreamEnv(described),
            BENCH_WORKER_KIND: 'baseline',
            BENCH_TASK_QUEUE: taskQueue,
            BENCH_WORKFLOW_BUNDLE: bundle,
            BENCH_WORKER_METRICS_ADDRESS: `127.0.0.1:${await freePort()}`,
          },
          pollerProbe(client, taskQueue),
        ),
      );
      await worker.start();
      log('bare worker up');
      targets.push({
        name: BARE,
        pids: { worker: worker.pid! },
        run: async (type, key) => {
          const operation = operationRef(TENANT, key);
          const input: BareHttpInput = {
            type,
            tenant: operation.tenant,
            key: operation.key,
            request: requestFor(type),
          };
          await client.workflow.execute('bareHttp', { taskQueue, workflowId: operation.workflowId, args: [input] });
        },
      });
    }

    for (const target of targets) {
      for (const type of opts.types) {
        const warm = await closedLoop(opts.warmup, 2, (i) => target.run(type, `cpu-${runId}-warm-${target.name}-${type}-${i}`));
        if (warm.errors.length > 0) throw new Error(`warm-up of ${target.name} ${type}: ${warm.errors[0]}`);
      }
    }
    log(
      `warmed up; ${opts.rounds} rounds × ${opts.concurrencies.length} concurrencies × ${opts.types.length} types × ${targets.length} targets × ${opts.ops} operations`,
    );

    const records: BatchRecord[] = [];
    const measuredFromUs = Number(process.hrtime.bigint() / 1000n);
    for (let round = 0; round < opts.rounds; round++) {
      for (const c of opts.concurrencies) {
        for (const type of opts.types) {
          for (const target of round % 2 === 0 ? targets : [...targets].reverse()) {
            const pids = { ...shared, ...target.pids };
            // The previous batch's tail (visibility, timers) settles before the meter starts.
            await sleep(300);
            const before = processCpu(pids);
            const prefix = `cpu-${runId}-${target.name}-${type}-c${c}-r${round}`;
            const result = await closedLoop(opts.ops, c, (i) => target.run(type, `${prefix}-${i}`));
            // The work a batch leaves behind (its history's visibility updates) is its own.
            await sleep(300);
            const after = processCpu(pids);
            const cpu: Record<string, number> = {};
            for (const name of Object.keys(after)) cpu[name] = after[name]! - (before[name] ?? after[name]!);
            records.push({ target: target.name, type, concurrency: c, round, ops: result.ok, errors: result.errors, cpuMs: cpu });
            log(
              `round ${round + 1} ${type} c=${c} ${target.name}: ${result.ok} ok, ${result.errors.length} errors, ` +
                ROLES.map((r) => `${r} ${((cpu[r] ?? 0) / Math.max(1, result.ok)).toFixed(1)}`).join(' '),
            );
          }
        }
      }
    }

    const measuredToUs = Number(process.hrtime.bigint() / 1000n);
    const names = targets.map((t) => t.name);
    console.log(`## CPU per operation: ${names.join(' vs ')}\n`);
    console.log(`\`npx tsx tools/bench/cpu-per-op.ts ${process.argv.slice(2).join(' ')}\``);
    console.log(
      `\nVariants: ${opts.variants.map((v, i) => `${v.name} = ${v.source}${v.compiled ? ' (compiled)' : ''} (${roots[i]})`).join('; ')}. ` +
        `LOG_LEVEL ${opts.logLevel}. "all": every process that does the operation's work (for bare, its Temporal client too; ` +
        `an API's driver is only the load generator). Columns in the order measured in even rounds, reversed in odd ones.\n`,
    );
    console.log(report(records, names, opts));
    if (opts.json) writeFileSync(opts.json, JSON.stringify({ options: opts, roots, records }, null, 2));
    // Stopped, so that every profile is written.
    await supervisor.stopAll();
    for (const part of opts.cpuProf) {
      // One file per thread: the main thread, the workflow thread, the module loader's.
      for (const file of readdirSync(join(profileDir, part)).filter((f) => f.endsWith('.cpuprofile'))) {
        console.log(`\n### profile of ${part}, ${file}\n`);
        console.log(profileSummary(join(profileDir, part, file), measuredFromUs, measuredToUs));
      }
    }
  } finally {
    http.close();
    await connection?.close().catch(() => undefined);
    await supervisor.stopAll();
    await sandboxes?.stop();
    if (opts.cpuProf.length === 0) rmSync(dataDir, { recursive: true, force: true });
    else log(`profiles kept in ${profileDir}`);
  }
}
