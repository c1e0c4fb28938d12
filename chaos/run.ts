// One chaos run: plan → stack → load and faults for `duration` → faults off, wait until
// every operation settled (bounded) → audit → report. Nothing here decides what is a
// violation except the clients (answers) and the auditor (ledgers).
import { accessSync, constants, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { audit, TENANT } from './auditor.js';
import { newClientStats, runOperation, type ClientContext, type OpRecord } from './client.js';
import { createRng } from './prng.js';
import type { ChaosOptions } from './options.js';
import { buildPlan, type ChaosPlan, type ProcessFault, type SandboxFaultWindow } from './plan.js';
import { findingsOf, sumCounts, type ChaosReport, type FaultTally } from './report.js';
import { startChaosStack, type ChaosLog, type ChaosStack } from './stack.js';
import { awaitDelivered, flakyWhile, newWebhookSecret, startWebhookReceiver } from './webhook-receiver.js';

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, Math.max(0, ms)));

/**
 * Where the run's SQLite files go: a RAM-backed temp dir when the machine has one. On a
 * shared VM disk every Temporal commit waits for an fsync (~80 ms per workflow start
 * measured here), which caps the dev server at a few operations per second and turns a
 * chaos run into a benchmark of the disk. Processes are killed, never the machine, so
 * the files survive every fault the run injects either way.
 */
function scratchRoot(): string {
  try {
    accessSync('/dev/shm', constants.W_OK);
    return '/dev/shm';
  } catch {
    return tmpdir();
  }
}

export function describePlan(plan: ChaosPlan): string {
  const by = (kind: string) => plan.sandboxFaults.filter((w) => w.fault === kind).length;
  const proc = (kind: ProcessFault['kind']) => plan.processFaults.filter((p) => p.kind === kind).length;
  return [
    `plan: seed ${plan.seed}, ${plan.durationMs / 1000} s, ${plan.ops.length} operations ` +
      `(${plan.ops.filter((o) => o.type === 'payment').length} payments, ${plan.ops.filter((o) => o.type === 'checkout').length} checkouts)`,
    `faults: ${by('drop')} drop, ${by('fail')} fail, ${by('delay')} delay, ${by('down')} down windows; ` +
      `${proc('worker_kill')} worker kills, ${proc('api_restart')} API restarts, ${proc('temporal_restart')} Temporal restarts`,
    `schedule hash: ${plan.hash}`,
  ].join('\n');
}

export function describeSchedule(plan: ChaosPlan): string {
  const rows: Array<[number, string]> = [
    ...plan.sandboxFaults.map((w): [number, string] => [
      w.atMs,
      `${w.service} ${w.fault} ${JSON.stringify(w.faults)} until ${(w.untilMs / 1000).toFixed(1)} s`,
    ]),
    ...plan.processFaults.map((p): [number, string] => [p.atMs, JSON.stringify(p)]),
  ];
  return rows
    .sort((a, b) => a[0] - b[0])
    .map(([at, text]) => `  ${(at / 1000).toFixed(1).padStart(6)} s  ${text}`)
    .join('\n');
}

export async function runChaos(opts: ChaosOptions, print: (line: string) => void): Promise<ChaosReport> {
  const plan = buildPlan(opts);
  const startedAt = Date.now();
  const log: ChaosLog = (line) => print(`[${((Date.now() - startedAt) / 1000).toFixed(1).padStart(6)} s] ${line}`);
  print(describePlan(plan));
  const dir = mkdtempSync(join(scratchRoot(), `retrysafe-chaos-s${opts.seed}-`));
  log(`starting the stack in ${dir}`);
  // The run's tenant has a completion webhook: a receiver here that fails and goes down at times.
  const webhookSecret = newWebhookSecret();
  const receiver = await startWebhookReceiver({
    secret: webhookSecret,
    random: createRng(opts.seed).fork('webhook-answers').next,
  });
  const webhookEnv = { RETRYSAFE_WEBHOOKS: `${TENANT}=${receiver.url}`, RETRYSAFE_WEBHOOK_DEADLINE: '10m' };
  const stack = await startChaosStack(dir, log, {
    worker: { ...webhookEnv, RETRYSAFE_WEBHOOK_SECRET: webhookSecret },
    api: webhookEnv,
  }).catch(async (err: unknown) => {
    await receiver.close();
    log(`the stack did not start; its files and logs are kept in ${dir}`);
    throw err;
  });
  let stopped = false;
  const stopStack = async () => {
    if (stopped) return;
    stopped = true;
    await stack.stop();
    await receiver.close();
  };
  const onSignal = () => {
    log('interrupted: stopping the stack');
    void stopStack().finally(() => process.exit(130));
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    const stackStartMs = Date.now() - startedAt;
    log(
      `stack up: temporal ${stack.temporalAddress}, api ${stack.apiUrls.join(' ')}, bank ${stack.bankUrl}, reservations ${stack.reservationsUrl}`,
    );

    const loadStart = Date.now();
    const loadEnd = loadStart + opts.durationMs;
    const ctx: ClientContext = {
      apiUrls: stack.apiUrls,
      deadline: loadEnd + opts.settleMs,
      stats: newClientStats(),
      violations: [],
    };
    const tally: FaultTally = {
      dropWindows: 0,
      failWindows: 0,
      delayWindows: 0,
      downWindows: 0,
      workerKills: 0,
      apiRestarts: 0,
      temporalRestarts: 0,
      readyzWhileTemporalDown: {},
    };
    let faultsOn = true;

    const ops = plan.ops.map(async (op): Promise<OpRecord> => {
      await sleep(loadStart + op.atMs - Date.now());
      return runOperation(ctx, op);
    });
    const sandboxDriver = Promise.all(
      plan.sandboxFaults.map((w) => driveWindow(stack, w, loadStart, tally, () => faultsOn, log)),
    );
    const processDriver = driveProcesses(stack, plan.processFaults, loadStart, tally, () => faultsOn, ctx, log);
    const receiverDriver = flakyWhile(receiver, createRng(opts.seed).fork('webhook-receiver'), () => faultsOn);
    const progress = setInterval(
      () => log(`load: ${ctx.stats.requests} requests, ${ctx.violations.length} violations so far`),
      15_000,
    );

    await sleep(loadEnd - Date.now());
    faultsOn = false;
    log('fault phase over: waiting for the last process fault, then clearing every fault');
    const [, , receiverDownWindows] = await Promise.all([sandboxDriver, processDriver, receiverDriver]);
    await stack.clearFaults();
    await stack.ensureAllUp();
    const loadMs = Date.now() - loadStart;
    log(`faults off; waiting for every operation to settle (bound ${opts.settleMs / 1000} s)`);
    const settleStart = Date.now();
    const records = await Promise.all(ops);
    clearInterval(progress);
    const settleMs = Date.now() - settleStart;

    // Every accepted operation: one whose clients gave up before its end still ends, and notifies.
    const accepted = records.filter((r) => r.accepted).map((r) => `${TENANT}/${r.op.key}/completed`);
    log(`waiting for the completion webhooks of ${accepted.length} accepted operations (bound 120 s)`);
    const undelivered = await awaitDelivered(receiver, accepted, 120_000);
    if (undelivered.length > 0) log(`${undelivered.length} webhooks still undelivered; the audit reports them`);

    log('auditing the ledgers and the operations API');
    const auditStart = Date.now();
    const result = await audit({
      apiUrls: stack.apiUrls,
      bankUrl: stack.bankUrl,
      reservationsUrl: stack.reservationsUrl,
      ops: plan.ops,
      records: new Map(records.map((r) => [r.op.key, r])),
      initialBalances: stack.initialBalances,
      initialStock: stack.initialStock,
      webhooks: receiver,
    });
    const auditMs = Date.now() - auditStart;
    const violations = [...ctx.violations, ...result.violations];
    for (const name of Object.keys(stack.unexpectedExits()))
      log(`note: ${name} died on its own during the run (see ${dir}/logs/${name}.log)`);

    await stopStack();
    const keep = opts.keep || violations.length > 0;
    if (!keep) rmSync(dir, { recursive: true, force: true });
    const report: ChaosReport = {
      passed: violations.length === 0,
      seed: opts.seed,
      durationMs: opts.durationMs,
      settleMs: opts.settleMs,
      scheduleHash: plan.hash,
      replay: `npm run chaos -- --seed ${opts.seed} --duration ${opts.durationMs / 1000}s --ops ${opts.ops}`,
      timings: { stackStartMs, loadMs, settleMs, auditMs, totalMs: Date.now() - startedAt },
      operations: {
        total: plan.ops.length,
        payment: plan.ops.filter((o) => o.type === 'payment').length,
        checkout: plan.ops.filter((o) => o.type === 'checkout').length,
        designedToFail: plan.ops.filter((o) => o.profile === 'doomed').length,
        mayFail: plan.ops.filter((o) => o.profile === 'tight').length,
      },
      http: ctx.stats,
      faults: {
        ...tally,
        droppedResponses: sumCounts(stack.counts.droppedResponses),
        droppedResponsesByService: stack.counts.droppedResponses,
        failedBeforeCommit: sumCounts(stack.counts.failedBeforeCommit),
        refusedWhileDown: sumCounts(stack.counts.refusedWhileDown),
        activityAttemptFailures: stack.counts.activityAttemptFailures,
        unexpectedExits: stack.unexpectedExits(),
      },
      outcomes: result.outcomes,
      ...(result.webhooks ? { webhooks: { ...result.webhooks, receiverDownWindows } } : {}),
      auditReads: result.reads,
      conservation: result.conservation,
      violations,
      violationKeys: [...new Set(violations.flatMap((v) => (v.key ? [v.key] : [])))],
      findings: findingsOf(ctx.stats, stack.unexpectedExits()),
      ...(keep ? { dataDir: dir } : {}),
    };
    return report;
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    await stopStack().catch((err) => log(`stopping the stack failed: ${String(err)}`));
  }
}

async function driveWindow(
  stack: ChaosStack,
  w: SandboxFaultWindow,
  loadStart: number,
  tally: FaultTally,
  faultsOn: () => boolean,
  log: ChaosLog,
): Promise<void> {
  await sleep(loadStart + w.atMs - Date.now());
  if (!faultsOn()) return;
  try {
    await stack.setFaults(w.service, w.faults);
    tally[`${w.fault}Windows`]++;
    log(`fault on: ${w.service} ${w.fault} ${JSON.stringify(w.faults)} for ${((w.untilMs - w.atMs) / 1000).toFixed(1)} s`);
    await sleep(loadStart + w.untilMs - Date.now());
    await stack.setFaults(w.service, { dropResponseAfterCommit: 0, failBeforeCommit: 0, delayMs: 0, down: false });
  } catch (err) {
    log(`fault window on ${w.service} could not be applied: ${String(err)}`);
  }
}

async function driveProcesses(
  stack: ChaosStack,
  events: ProcessFault[],
  loadStart: number,
  tally: FaultTally,
  faultsOn: () => boolean,
  ctx: ClientContext,
  log: ChaosLog,
): Promise<void> {
  // Each event fires at its planned time; events on the same process wait for each other
  // (a worker still bundling its workflows is not killed twice), others run alongside.
  const busy = new Map<string, Promise<void>>();
  const target = (ev: ProcessFault) =>
    ev.kind === 'worker_kill' ? `worker-${ev.worker}` : ev.kind === 'api_restart' ? `api-${ev.api}` : 'temporal';
  await Promise.all(
    events.map(async (ev) => {
      await sleep(loadStart + ev.atMs - Date.now());
      const previous = busy.get(target(ev)) ?? Promise.resolve();
      const mine = previous.then(() => (faultsOn() ? fire(ev) : undefined));
      busy.set(target(ev), mine);
      await mine;
    }),
  );

  async function fire(ev: ProcessFault): Promise<void> {
    try {
      switch (ev.kind) {
        case 'worker_kill': {
          await stack.killWorker(ev.worker);
          tally.workerKills++;
          log(`SIGKILL worker-${ev.worker}; restarting it in ${ev.restartAfterMs} ms`);
          await sleep(ev.restartAfterMs);
          await stack.startWorker(ev.worker);
          log(`worker-${ev.worker} ready again`);
          break;
        }
        case 'api_restart': {
          log(`restarting api-${ev.api} (SIGTERM, then start on the same port)`);
          tally.apiRestarts++;
          await stack.restartApi(ev.api);
          log(`api-${ev.api} listening again`);
          break;
        }
        case 'temporal_restart': {
          const down = Date.now();
          log(`stopping Temporal for ${ev.downMs} ms`);
          await stack.stopTemporal();
          tally.temporalRestarts++;
          // Readiness must say so while the engine is gone: a load balancer takes the
          // instance out instead of sending it requests it can only refuse.
          for (const url of ctx.apiUrls) {
            const status = await fetch(`${url}/readyz`, { signal: AbortSignal.timeout(10_000) })
              .then((r) => String(r.status))
              .catch(() => 'network');
            tally.readyzWhileTemporalDown[status] = (tally.readyzWhileTemporalDown[status] ?? 0) + 1;
            if (status === '200')
              ctx.violations.push({
                rule: 'API: /readyz reports Temporal down',
                message: `${url}/readyz answered 200 while Temporal was stopped`,
              });
          }
          await sleep(down + ev.downMs - Date.now());
          await stack.startTemporal();
          log(`Temporal back on the same database file after ${((Date.now() - down) / 1000).toFixed(1)} s`);
          break;
        }
      }
    } catch (err) {
      log(`process fault ${ev.kind} failed: ${String(err)}`);
    }
  }
}
