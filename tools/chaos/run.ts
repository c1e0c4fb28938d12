// One chaos run: plan → stack → load and faults for `duration` → faults off, wait until
// every operation settled (bounded) → audit → report. Nothing here decides what is a
// violation except the clients (answers) and the auditor (ledgers).
import { randomBytes } from 'node:crypto';
import { accessSync, constants, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { audit } from './auditor.js';
import { newClientStats, runOperation, type ClientContext, type OpRecord } from './client.js';
import { createRng } from './prng.js';
import type { ChaosOptions } from './options.js';
import {
  allOps,
  buildPlan,
  countByType,
  FLOOD,
  PROCESS_FAULT_RATES,
  TENANTS,
  type ChaosPlan,
  type ProcessFault,
  type SandboxFaultWindow,
} from './plan.js';
import { findingsOf, newFaultTally, sumCounts, type ChaosReport, type FaultTally, type FloodReport } from './report.js';
import { NO_FAULTS } from '../../downstream/shared/faults.js';
import { completionEventId, operationRef } from '../../workflows/identity.js';
import { builtInRegistry } from '../../workflows/registry.js';
import { retryWhile, startChaosStack, type ChaosLog, type ChaosStack } from './stack.js';
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

/** `payment 12, checkout 9, transfer 10`: every type of the registry, in its order. */
function typeCounts(counts: Record<string, number>): string {
  return Object.entries(counts)
    .map(([type, n]) => `${type} ${n}`)
    .join(', ');
}

export function describePlan(plan: ChaosPlan): string {
  const by = (kind: string) => plan.sandboxFaults.filter((w) => w.fault === kind).length;
  const proc = (kind: ProcessFault['kind']) => plan.processFaults.filter((p) => p.kind === kind).length;
  return [
    `plan: seed ${plan.seed}, ${plan.topology === 'cluster' ? 'Temporal cluster on PostgreSQL' : 'embedded Temporal dev server'}, ` +
      `${plan.durationMs / 1000} s, ${plan.ops.length} operations of tenant ${TENANTS.main} (${typeCounts(countByType(plan.ops))})`,
    `flood: tenant ${plan.flood.tenant} sends ${plan.flood.ops.length} new operations to api-${FLOOD.api} at ${(plan.flood.atMs / 1000).toFixed(1)} s ` +
      `(${typeCounts(countByType(plan.flood.ops))}), limited to ${FLOOD.rate}, ${FLOOD.maxInFlight} in flight per API instance`,
    `faults: ${by('drop')} drop, ${by('fail')} fail, ${by('delay')} delay, ${by('down')} down, ${by('crash')} crash windows; ` +
      PROCESS_FAULT_RATES[plan.topology].map(([kind]) => `${proc(kind)} ${kind}`).join(', '),
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
  // Both tenants have a completion webhook: a receiver here that fails and goes down at times.
  const webhookSecret = newWebhookSecret();
  const receiver = await startWebhookReceiver({
    secret: webhookSecret,
    random: createRng(opts.seed).fork('webhook-answers').next,
  });
  const tenants = Object.values(TENANTS);
  const webhookEnv = {
    RETRYSAFE_WEBHOOKS: tenants.map((t) => `${t}=${receiver.url}`).join(','),
    RETRYSAFE_WEBHOOK_DEADLINE: '10m',
  };
  // An API key per tenant, new for each run; only the flooding tenant is limited.
  const secrets = Object.fromEntries(tenants.map((t) => [t, `sk_chaos_${randomBytes(18).toString('hex')}`]));
  const authorization = Object.fromEntries(tenants.map((t) => [t, `Bearer ${secrets[t]}`]));
  const stack = await startChaosStack(dir, log, opts.topology, {
    worker: { ...webhookEnv, RETRYSAFE_WEBHOOK_SECRET: webhookSecret },
    api: {
      ...webhookEnv,
      RETRYSAFE_API_KEYS: tenants.map((t) => `${secrets[t]}=${t}`).join(','),
      RETRYSAFE_TENANT_LIMITS: `${TENANTS.flood}=${FLOOD.rate}`,
      RETRYSAFE_MAX_IN_FLIGHT: String(FLOOD.maxInFlight),
    },
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
      `stack up (${opts.topology === 'cluster' ? 'Temporal cluster on PostgreSQL' : 'embedded dev server'}): temporal ${stack.temporalAddress}, api ${stack.apiUrls.join(' ')}, bank ${stack.bankUrl}, reservations ${stack.reservationsUrl}`,
    );

    const loadStart = Date.now();
    const loadEnd = loadStart + opts.durationMs;
    const ctx: ClientContext = {
      apiUrls: stack.apiUrls,
      registry: builtInRegistry,
      authorization,
      deadline: Number.POSITIVE_INFINITY,
      stats: newClientStats(),
      violations: [],
    };
    const tally = newFaultTally();
    let faultsOn = true;

    const ops = allOps(plan).map(async (op): Promise<OpRecord> => {
      await sleep(loadStart + op.atMs - Date.now());
      return runOperation(ctx, op);
    });
    const sandboxDriver = Promise.all(
      plan.sandboxFaults.map((w) => driveWindow(stack, w, loadStart, tally, () => faultsOn, log)),
    );
    const processDriver = driveProcesses(stack, plan.processFaults, loadStart, tally, ctx, log);
    const receiverDriver = flakyWhile(receiver, createRng(opts.seed).fork('webhook-receiver'), () => faultsOn);
    const progress = setInterval(
      () => log(`load: ${ctx.stats.requests} requests, ${ctx.violations.length} violations so far`),
      15_000,
    );

    await sleep(loadEnd - Date.now());
    faultsOn = false;
    log('fault phase over: waiting for the last process fault, then clearing every fault');
    const [, , receiverDownWindows] = await Promise.all([sandboxDriver, processDriver, receiverDriver]);
    // Up first: a sandbox that crashed after a commit may still be coming back.
    await stack.ensureAllUp();
    await stack.clearFaults();
    const loadMs = Date.now() - loadStart;
    log(`faults off; waiting for every operation to settle (bound ${opts.settleMs / 1000} s)`);
    const settleStart = Date.now();
    // The bound counts from here: the time spent waiting for the last process fault to end
    // is not taken from the operations' time to finish.
    ctx.deadline = settleStart + opts.settleMs;
    const records = await Promise.all(ops);
    clearInterval(progress);
    const settleMs = Date.now() - settleStart;

    // Every accepted operation: one whose clients gave up before its end still ends, and notifies.
    const accepted = records.filter((r) => r.accepted).map((r) => completionEventId(operationRef(r.op.tenant, r.op.key)));
    log(`waiting for the completion webhooks of ${accepted.length} accepted operations (bound 120 s)`);
    const undelivered = await awaitDelivered(receiver, accepted, 120_000);
    if (undelivered.length > 0) log(`${undelivered.length} webhooks still undelivered; the audit reports them`);

    log('auditing the ledgers and the operations API');
    const auditStart = Date.now();
    const result = await audit({
      apiUrls: stack.apiUrls,
      services: { bank: stack.bankUrl, reservations: stack.reservationsUrl },
      registry: builtInRegistry,
      authorization,
      ops: allOps(plan),
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
      topology: opts.topology,
      seed: opts.seed,
      durationMs: opts.durationMs,
      settleMs: opts.settleMs,
      scheduleHash: plan.hash,
      replay: `npm run chaos --${opts.topology === 'cluster' ? ' --cluster' : ''} --seed ${opts.seed} --duration ${opts.durationMs / 1000}s --ops ${opts.ops}`,
      timings: { stackStartMs, loadMs, settleMs, auditMs, totalMs: Date.now() - startedAt },
      operations: {
        total: plan.ops.length + plan.flood.ops.length,
        byType: countByType(allOps(plan)),
        flood: plan.flood.ops.length,
        designedToFail: plan.ops.filter((o) => o.profile === 'doomed').length,
        mayFail: plan.ops.filter((o) => o.profile === 'tight').length,
      },
      http: ctx.stats,
      flood: floodReport(plan, records, ctx, loadStart),
      faults: {
        ...tally,
        droppedResponses: sumCounts(stack.counts.droppedResponses),
        droppedResponsesByService: stack.counts.droppedResponses,
        crashedAfterCommit: sumCounts(stack.counts.crashedAfterCommit),
        crashedAfterCommitByService: stack.counts.crashedAfterCommit,
        failedBeforeCommit: sumCounts(stack.counts.failedBeforeCommit),
        refusedWhileDown: sumCounts(stack.counts.refusedWhileDown),
        delayed: sumCounts(stack.counts.delayed),
        downstreamCallsFailed: stack.counts.downstreamCallsFailed,
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

/**
 * One sandbox fault window: on at its start, off at its end. The stack remembers the faults
 * in force so that a sandbox killed and restarted gets them again, so a window always ends
 * by switching its own faults off (only its own: a crash window may outlast its plan and
 * overlap the next one), also when it never started.
 *
 * A crash window is a single event more than a span: its service dies at a commit and comes
 * back without faults. So it waits for its service when that is down at the planned start
 * (a planned kill restarting it, slow on a loaded machine), and stays armed past its planned
 * end until the service has crashed once, as long as the fault phase lasts.
 */
export async function driveWindow(
  stack: Pick<ChaosStack, 'setFaults' | 'counts'>,
  w: SandboxFaultWindow,
  loadStart: number,
  tally: FaultTally,
  faultsOn: () => boolean,
  log: ChaosLog,
): Promise<void> {
  await sleep(loadStart + w.atMs - Date.now());
  if (!faultsOn()) return;
  const crash = w.fault === 'crash';
  const plannedEnd = loadStart + w.untilMs;
  /** The window starts once the service answers: until its planned end, or for a crash the fault phase's. */
  const stillTrying = () => (crash ? faultsOn() : Date.now() + 500 < plannedEnd);
  const off = Object.fromEntries(Object.keys(w.faults).map((k) => [k, NO_FAULTS[k as keyof typeof NO_FAULTS]]));
  const crashes = () => stack.counts.crashedAfterCommit[w.service];
  const crashesBefore = crashes();

  const applied = await retryWhile(() => stack.setFaults(w.service, w.faults), stillTrying, 500).then(
    () => true,
    (err: unknown) => {
      log(`fault window on ${w.service} could not be applied: ${String(err)}`);
      return false;
    },
  );
  if (applied) {
    tally[`${w.fault}Windows`]++;
    const forMs = Math.max(0, plannedEnd - Date.now());
    log(`fault on: ${w.service} ${w.fault} ${JSON.stringify(w.faults)} for ${(forMs / 1000).toFixed(1)} s`);
    await sleep(forMs);
    if (crash && crashes() === crashesBefore) {
      log(`${w.service} has not crashed yet: its crash window stays armed until it does or the faults stop`);
      while (crashes() === crashesBefore && faultsOn()) await sleep(250);
    }
  }
  // A service that is down now comes back without faults; the stack's record is what matters.
  await stack.setFaults(w.service, off).catch(() => undefined);
}

async function driveProcesses(
  stack: ChaosStack,
  events: ProcessFault[],
  loadStart: number,
  tally: FaultTally,
  ctx: ClientContext,
  log: ChaosLog,
): Promise<void> {
  // Each event fires at its planned time; events on the same process wait for each other
  // (a worker still bundling its workflows is not killed twice), others run alongside. One
  // that waited past the end of the fault phase still fires: every planned crash happens.
  const busy = new Map<string, Promise<void>>();
  await Promise.all(
    events.map(async (ev) => {
      await sleep(loadStart + ev.atMs - Date.now());
      const target = partOf(ev);
      const previous = busy.get(target) ?? Promise.resolve();
      const mine = previous.then(() => fire(ev));
      busy.set(target, mine);
      await mine;
    }),
  );

  function count(ev: ProcessFault, result: { inFlight?: number; downMs: number }): void {
    tally.processes[ev.kind] = (tally.processes[ev.kind] ?? 0) + 1;
    if (result.inFlight !== undefined) (tally.inFlightAtKill[ev.kind] ??= []).push(result.inFlight);
    (tally.downMs[ev.kind] ??= []).push(result.downMs);
  }

  /** Stopped now (SIGKILL unless said otherwise), started again by the schedule after `pauseMs`. */
  async function stopAndStart(name: string, pauseMs: number, signal: NodeJS.Signals = 'SIGKILL'): Promise<number> {
    const down = Date.now();
    await stack.stopPart(name, signal);
    await sleep(down + pauseMs - Date.now());
    await stack.startPart(name);
    return Date.now() - down;
  }

  async function fire(ev: ProcessFault): Promise<void> {
    const name = partOf(ev);
    try {
      switch (ev.kind) {
        case 'worker_kill': {
          log(`SIGKILL ${name}; restarting it in ${ev.restartAfterMs} ms`);
          count(ev, { downMs: await stopAndStart(name, ev.restartAfterMs) });
          log(`${name} ready again`);
          break;
        }
        case 'history_kill': {
          log(`SIGKILL ${name}; restarting it in ${ev.restartAfterMs} ms`);
          count(ev, { downMs: await stopAndStart(name, ev.restartAfterMs) });
          log(`${name} serving again`);
          break;
        }
        case 'api_restart': {
          log(`restarting ${name} (SIGTERM, then start on the same port)`);
          count(ev, { downMs: await stopAndStart(name, 0, 'SIGTERM') });
          log(`${name} listening again`);
          break;
        }
        case 'api_kill':
        case 'bank_kill':
        case 'reservations_kill': {
          // Killed with a request in flight: the supervisor restarts it on the same port and file.
          const result = await stack.kill(name, { afterRequestMs: ev.afterRequestMs });
          count(ev, result);
          log(
            `SIGKILL ${name} with ${result.inFlight} requests in flight; the supervisor had it up again after ${seconds(result.downMs)}`,
          );
          break;
        }
        case 'temporal_kill':
        case 'frontend_kill': {
          const result = await stack.kill(name);
          count(ev, { downMs: result.downMs });
          log(`SIGKILL ${name}; the supervisor had it up again after ${seconds(result.downMs)}`);
          break;
        }
        case 'postgres_restart': {
          log(`stopping PostgreSQL (${ev.mode} shutdown) for ${ev.downMs} ms`);
          count(ev, { downMs: await stopAndStart(name, ev.downMs, ev.mode === 'fast' ? 'SIGINT' : 'SIGQUIT') });
          log('PostgreSQL accepting connections again');
          break;
        }
        case 'temporal_restart': {
          const down = Date.now();
          log(`stopping Temporal for ${ev.downMs} ms`);
          await stack.stopPart(name);
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
          await stack.startPart(name);
          count(ev, { downMs: Date.now() - down });
          log(`Temporal back on the same database file after ${seconds(Date.now() - down)}`);
          break;
        }
      }
    } catch (err) {
      log(`process fault ${ev.kind} on ${name} failed: ${String(err)}`);
    }
  }
}

/** The part a process fault acts on, by its name in the stack. */
function partOf(ev: ProcessFault): string {
  switch (ev.kind) {
    case 'worker_kill':
      return `worker-${ev.worker}`;
    case 'api_restart':
    case 'api_kill':
      return `api-${ev.api}`;
    case 'bank_kill':
      return 'bank';
    case 'reservations_kill':
      return 'reservations';
    case 'temporal_restart':
    case 'temporal_kill':
      return 'temporal';
    case 'history_kill':
      return `temporal-history-${ev.history + 1}`;
    case 'frontend_kill':
      return 'temporal-frontend';
    case 'postgres_restart':
      return 'postgres';
  }
}

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}
