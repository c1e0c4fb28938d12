// One chaos run: plan → stack → load and faults for `duration` → faults off, wait until
// every operation settled (bounded) → audit → report. Nothing here decides what is a
// violation except the clients (answers) and the auditor (ledgers).
import { randomBytes } from 'node:crypto';
import { accessSync, constants, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { completionEventId, operationRef } from '../../workflows/identity.js';
import { builtInCatalog } from '../../workflows/catalog.js';
import { audit } from './auditor.js';
import { runOperation } from './client.js';
import { describePlan } from './describe.js';
import { driveProcesses, driveWindow, sleepUntil } from './drivers.js';
import type { ChaosOptions } from './options.js';
import { allOps, buildPlan, countByType, type ChaosPlan } from './plan.js';
import { createRng } from './prng.js';
import { newClientStats, type ClientContext, type OpRecord } from './records.js';
import { findingsOf, newFaultTally, sumCounts, type ChaosReport, type FaultTally, type FloodReport } from './report.js';
import { FLOOD, TENANTS } from './settings.js';
import { startChaosStack, type ChaosLog, type ChaosStack } from './stack.js';
import { awaitDelivered, flakyWhile, newWebhookSecret, startWebhookReceiver, type WebhookReceiver } from './webhook-receiver.js';

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

/** The stack with its webhook receiver (a receiver here that fails and goes down at times), API keys and flood limits. */
async function startAll(opts: ChaosOptions, dir: string, log: ChaosLog) {
  // Both tenants have a completion webhook. Each tenant signs with a secret of its own, and
  // the receiver verifies each event with its tenant's.
  const tenants = Object.values(TENANTS);
  const webhookSecrets = new Map(tenants.map((t) => [t, newWebhookSecret()]));
  const receiver = await startWebhookReceiver({
    secret: webhookSecrets,
    random: createRng(opts.seed).fork('webhook-answers').next,
  });
  const webhookEnv = {
    RETRYSAFE_WEBHOOKS: tenants.map((t) => `${t}=${receiver.url}`).join(','),
    RETRYSAFE_WEBHOOK_DEADLINE: '10m',
  };
  // An API key per tenant, new for each run; only the flooding tenant is limited.
  const secrets = Object.fromEntries(tenants.map((t) => [t, `sk_chaos_${randomBytes(18).toString('hex')}`]));
  const authorization = Object.fromEntries(tenants.map((t) => [t, `Bearer ${secrets[t]}`]));
  const stack = await startChaosStack(dir, log, opts.topology, {
    worker: { ...webhookEnv, RETRYSAFE_WEBHOOK_SECRETS: [...webhookSecrets].map(([t, s]) => `${t}=${s}`).join(',') },
    api: {
      ...webhookEnv,
      RETRYSAFE_API_KEYS: tenants.map((t) => `${secrets[t]}=${t}`).join(','),
      RETRYSAFE_TENANT_LIMITS: `${TENANTS.flood}=${FLOOD.rate}`,
      RETRYSAFE_IN_FLIGHT_CEILING: String(FLOOD.maxInFlight),
    },
  }).catch(async (err: unknown) => {
    await receiver.close();
    log(`the stack did not start; its files and logs are kept in ${dir}`);
    throw err;
  });
  return { stack, receiver, authorization };
}

/**
 * Load and faults for the run's duration, then faults off, every part up, and every operation
 * settled (bounded): the clients' records, and what the faults and the receiver did.
 */
async function loadAndFaults(
  opts: ChaosOptions,
  plan: ChaosPlan,
  stack: ChaosStack,
  receiver: WebhookReceiver,
  ctx: ClientContext,
  log: ChaosLog,
) {
  const loadStart = Date.now();
  const tally = newFaultTally();
  let faultsOn = true;
  const ops = allOps(plan).map(async (op): Promise<OpRecord> => {
    await sleepUntil(loadStart + op.atMs);
    return runOperation(ctx, op);
  });
  const drivers = Promise.all([
    Promise.all(plan.sandboxFaults.map((w) => driveWindow(stack, w, loadStart, tally, () => faultsOn, log))),
    driveProcesses(stack, plan.processFaults, loadStart, tally, ctx, log),
    flakyWhile(receiver, createRng(opts.seed).fork('webhook-receiver'), () => faultsOn),
  ]);
  const progress = setInterval(
    () => log(`load: ${ctx.stats.requests} requests, ${ctx.violations.length} violations so far`),
    15_000,
  );
  await sleepUntil(loadStart + opts.durationMs);
  faultsOn = false;
  log('fault phase over: waiting for the last process fault, then clearing every fault');
  const [, , receiverDownWindows] = await drivers;
  // Up first: a sandbox that crashed after a commit may still be coming back.
  await stack.ensureAllUp();
  await stack.clearFaults();
  const loadMs = Date.now() - loadStart;
  log(`faults off; waiting for every operation to settle (bound ${opts.settleMs / 1000} s)`);
  const settleStart = Date.now();
  // The bound counts from here: waiting for the last process fault is not taken from the operations' time to finish.
  ctx.deadline = settleStart + opts.settleMs;
  const records = await Promise.all(ops);
  clearInterval(progress);
  return { records, tally, receiverDownWindows, loadStart, loadMs, settleMs: Date.now() - settleStart };
}

/** The completion webhooks of every accepted operation awaited (bounded), then the audit of the ledgers and the operations API. */
async function auditRun(
  plan: ChaosPlan,
  stack: ChaosStack,
  receiver: WebhookReceiver,
  authorization: Record<string, string>,
  records: OpRecord[],
  log: ChaosLog,
) {
  // Every accepted operation: one whose clients gave up before its end still ends, and notifies.
  const accepted = records.filter((r) => r.accepted).map((r) => completionEventId(operationRef(r.op.tenant, r.op.key)));
  log(`waiting for the completion webhooks of ${accepted.length} accepted operations (bound 120 s)`);
  const undelivered = await awaitDelivered(receiver, accepted, 120_000);
  if (undelivered.length > 0) log(`${undelivered.length} webhooks still undelivered; the audit reports them`);
  log('auditing the ledgers and the operations API');
  const auditStart = Date.now();
  const result = await audit({
    ...{ apiUrls: stack.apiUrls, services: { bank: stack.bankUrl, reservations: stack.reservationsUrl }, authorization },
    ...{ catalog: builtInCatalog, ops: allOps(plan), records: new Map(records.map((r) => [r.op.key, r])), webhooks: receiver },
    ...{ initialBalances: stack.initialBalances, initialStock: stack.initialStock },
  });
  return { result, auditMs: Date.now() - auditStart };
}

export async function runChaos(opts: ChaosOptions, print: (line: string) => void): Promise<ChaosReport> {
  const plan = buildPlan(opts);
  const startedAt = Date.now();
  const log: ChaosLog = (line) => print(`[${((Date.now() - startedAt) / 1000).toFixed(1).padStart(6)} s] ${line}`);
  print(describePlan(plan));
  const dir = mkdtempSync(join(scratchRoot(), `retrysafe-chaos-s${opts.seed}-`));
  log(`starting the stack in ${dir}`);
  const { stack, receiver, authorization } = await startAll(opts, dir, log);
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
    const where = opts.topology === 'cluster' ? 'Temporal cluster on PostgreSQL' : 'embedded dev server';
    log(
      `stack up (${where}): temporal ${stack.temporalAddress}, api ${stack.apiUrls.join(' ')}, bank ${stack.bankUrl}, reservations ${stack.reservationsUrl}`,
    );
    const ctx: ClientContext = {
      ...{ apiUrls: stack.apiUrls, catalog: builtInCatalog, authorization },
      ...{ deadline: Number.POSITIVE_INFINITY, stats: newClientStats(), violations: [] },
    };
    const load = await loadAndFaults(opts, plan, stack, receiver, ctx, log);
    const { result, auditMs } = await auditRun(plan, stack, receiver, authorization, load.records, log);
    const violations = [...ctx.violations, ...result.violations];
    for (const name of Object.keys(stack.unexpectedExits()))
      log(`note: ${name} died on its own during the run (see ${dir}/logs/${name}.log)`);
    await stopStack();
    const keep = opts.keep || violations.length > 0;
    if (!keep) rmSync(dir, { recursive: true, force: true });
    return {
      ...{
        passed: violations.length === 0,
        topology: opts.topology,
        seed: opts.seed,
        durationMs: opts.durationMs,
        settleMs: opts.settleMs,
      },
      scheduleHash: plan.hash,
      replay: `npm run chaos --${opts.topology === 'cluster' ? ' --cluster' : ''} --seed ${opts.seed} --duration ${opts.durationMs / 1000}s --ops ${opts.ops}`,
      timings: { stackStartMs, loadMs: load.loadMs, settleMs: load.settleMs, auditMs, totalMs: Date.now() - startedAt },
      operations: {
        ...{ total: plan.ops.length + plan.flood.ops.length, byType: countByType(allOps(plan)), flood: plan.flood.ops.length },
        ...{
          designedToFail: plan.ops.filter((o) => o.profile === 'doomed').length,
          mayFail: plan.ops.filter((o) => o.profile === 'tight').length,
        },
      },
      http: ctx.stats,
      flood: floodReport(plan, load.records, ctx, load.loadStart),
      faults: faultsReport(load.tally, stack),
      outcomes: result.outcomes,
      ...(result.webhooks ? { webhooks: { ...result.webhooks, receiverDownWindows: load.receiverDownWindows } } : {}),
      ...{ auditReads: result.reads, conservation: result.conservation, violations },
      violationKeys: [...new Set(violations.flatMap((v) => (v.key ? [v.key] : [])))],
      findings: findingsOf(ctx.stats, stack.unexpectedExits()),
      ...(keep ? { dataDir: dir } : {}),
    };
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    await stopStack().catch((err) => log(`stopping the stack failed: ${String(err)}`));
  }
}

/** What the faults did: the windows and process faults the run fired, and what the sandboxes and workers reported. */
function faultsReport(tally: FaultTally, stack: ChaosStack): ChaosReport['faults'] {
  const c = stack.counts;
  return {
    ...tally,
    ...{ droppedResponses: sumCounts(c.droppedResponses), droppedResponsesByService: c.droppedResponses },
    ...{ crashedAfterCommit: sumCounts(c.crashedAfterCommit), crashedAfterCommitByService: c.crashedAfterCommit },
    ...{
      failedBeforeCommit: sumCounts(c.failedBeforeCommit),
      refusedWhileDown: sumCounts(c.refusedWhileDown),
      delayed: sumCounts(c.delayed),
    },
    ...{ downstreamCallsFailed: c.downstreamCallsFailed, unexpectedExits: stack.unexpectedExits() },
  };
}

/** What the flooding tenant met: its answers by status, and how long until every one of its operations was accepted. */
function floodReport(plan: ChaosPlan, records: OpRecord[], ctx: ClientContext, loadStart: number): FloodReport {
  const flood = records.filter((r) => r.op.flood);
  const accepted = flood.filter((r) => r.accepted);
  const lastAccepted = Math.max(...accepted.map((r) => r.acceptedAt ?? 0));
  const requests = ctx.stats.byTenant[plan.flood.tenant] ?? { requests: 0, byStatus: {} };
  return {
    tenant: plan.flood.tenant,
    atMs: plan.flood.atMs,
    ops: flood.length,
    accepted: accepted.length,
    requests: requests.requests,
    byStatus: requests.byStatus,
    unavailableByCode: ctx.stats.unavailableByTenant[plan.flood.tenant] ?? {},
    ...(accepted.length > 0 ? { allAcceptedAfterMs: lastAccepted - (loadStart + plan.flood.atMs) } : {}),
  };
}
