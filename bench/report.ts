// The Markdown report of a run: ratios first, then each scenario's table, the machine,
// the versions and the flags. Everything in it comes from the results JSON beside it.
import { TARGETS, clockTrouble, computeVerdicts, find, type BenchResults, type Met } from './results.js';
import { ALL_ON } from './scenarios/ablation.js';
import type { Kind, ScenarioResult } from './scenarios/measure.js';

const n1 = (v: number) => (Number.isFinite(v) ? v.toFixed(1) : 'n/a');
const n2 = (v: number) => (Number.isFinite(v) ? v.toFixed(2) : 'n/a');
const ms = (v: number) => (!Number.isFinite(v) ? 'n/a' : v >= 100 ? v.toFixed(0) : v >= 10 ? v.toFixed(1) : v.toFixed(2));
const check = (ok: boolean) => (ok ? '✅' : '❌');

function table(head: string[], rows: Array<Array<string | number>>): string {
  return [`| ${head.join(' | ')} |`, `|${head.map(() => '---').join('|')}|`, ...rows.map((r) => `| ${r.join(' | ')} |`)].join(
    '\n',
  );
}

function pct(s: ScenarioResult | undefined): string {
  return s ? `${ms(s.latencyMs.p50)} / ${ms(s.latencyMs.p95)} / ${ms(s.latencyMs.p99)}` : 'n/a';
}

function cpuPerOp(s: ScenarioResult, proc: string): number {
  const cpu = s.usage.cpuMs[proc];
  return cpu === undefined || s.ops === 0 ? Number.NaN : cpu / s.ops;
}

function rpcsPerOp(s: ScenarioResult): string {
  const entries = Object.entries(s.usage.rpcs);
  if (entries.length === 0) return '0';
  const total = entries.reduce((a, [, v]) => a + v, 0);
  return `${n2(total / s.ops)} (${entries.map(([m, v]) => `${m} ${n2(v / s.ops)}`).join(', ')})`;
}

const KIND_LABEL: Record<Kind, string> = {
  payment: 'payment',
  checkout: 'checkout',
  bare1: 'bare, 1 activity',
  bare3: 'bare, 3 activities',
  'payment-direct': 'payment, no API',
  'checkout-direct': 'checkout, no API',
  'bare1-tracked': 'bare 1 + bookkeeping',
  'bare3-tracked': 'bare 3 + bookkeeping',
  replay: 'replay (cached)',
  'replay-uncached': 'replay (no cache)',
  plain: 'plain endpoint',
  restate: 'checkout on Restate',
  dbos: 'checkout on DBOS',
  'replay-checkout': 'checkout replay (cached)',
  'replay-restate': 'checkout replay on Restate',
  'replay-dbos': 'checkout replay on DBOS',
};

const PEER_KINDS = new Set<Kind>(['restate', 'dbos', 'replay-restate', 'replay-dbos']);

const MET: Record<Met, string> = {
  moonshot: '🌙 moonshot',
  target: '✅ target',
  missed: '❌ missed',
  'not measured': '— not measured',
};

/** The processes that do a kind's work (the driver, the bench process, is shown apart unless it is the client). */
const PARTS: Partial<Record<Kind, string[]>> = {
  payment: ['api', 'worker', 'temporal', 'bank', 'reservations'],
  checkout: ['api', 'worker', 'temporal', 'bank', 'reservations'],
  bare1: ['baselineWorker', 'temporal', 'orchestrator'],
  bare3: ['baselineWorker', 'temporal', 'orchestrator'],
  restate: ['restate-server', 'restate-service', 'bank', 'reservations'],
  dbos: ['postgres', 'dbos-service', 'bank', 'reservations'],
};

const PART_LABEL: Record<string, string> = {
  orchestrator: 'bench (Temporal client)',
  baselineWorker: 'worker',
  postgres: 'PostgreSQL',
};

/** CPU ms per operation of each process that does `s`'s work, and their sum. */
function systemCpu(s: ScenarioResult): { total: number; parts: Array<[string, number]> } {
  const parts = (PARTS[s.kind] ?? []).map((p): [string, number] => [p, cpuPerOp(s, p)]);
  return { total: parts.reduce((a, [, v]) => a + (Number.isFinite(v) ? v : 0), 0), parts };
}

export function markdownReport(r: BenchResults, files: { json: string; svg: string; png: string | null }): string {
  const out: string[] = [];
  const cs = r.ratios.map((row) => row.concurrency);
  out.push(`# retrysafe benchmark — ${r.name}`);
  out.push('');
  out.push(
    `\`${r.command}\` · mode **${r.mode}** · started ${r.startedAt} · took ${(r.durationMs / 1000).toFixed(0)} s · ` +
      `${r.machine.cores} cores, ${r.machine.cpuModel} · **load average ${r.machine.loadAverage}** at the start` +
      `${r.machine.loadAverageEnd ? `, ${r.machine.loadAverageEnd} at the end` : ''} (1, 5, 15 min; above ${r.machine.cores} every process here waited for a core). ` +
      `Raw numbers: [${files.json}](${files.json}).` +
      (r.settings.profiled ? ' **Profiled run**: the API and the worker ran under --cpu-prof, which slows them.' : ''),
  );
  out.push('');
  if (r.mode !== 'default') {
    out.push(
      `> **A ${r.mode} run**: fewer operations and one round per concurrency, so its figures are indicative. ` +
        'The report to quote is a full `npm run bench -- --peers` on a quiet machine.',
    );
    out.push('');
  }

  const verdicts = r.verdicts ?? computeVerdicts(r);
  out.push('## Verdicts');
  out.push('');
  out.push(
    "Each computed from this run's own numbers. Peers: the same checkout saga (reserve → charge → confirm, keys derived " +
      "from the idempotency key, compensations registered first) on Restate and on DBOS Transact, against retrysafe's own " +
      'sandboxes, through the same HTTP driver at the same concurrencies' +
      (r.peers ? '' : ' — not in this run (`npm run bench -- --peers`)') +
      '. R1 and R2 divide by bare Temporal on the same server with activities of the same kind ' +
      `(${r.activityKind ? `**${r.activityKind.used}**, ${r.activityKind.how}` : 'regular'}).`,
  );
  out.push('');
  out.push(
    table(
      ['figure', 'now', 'target', 'moonshot', 'verdict', 'from'],
      verdicts.map((v) => [v.figure, v.now, v.target, v.moonshot, MET[v.met], v.note ?? '']),
    ),
  );
  out.push('');
  out.push('## Ratios (and their targets)');
  out.push('');
  out.push(
    'R1 = retrysafe operations/s ÷ bare-Temporal workflows/s with the same number of activities, both at the same ' +
      "concurrency c; operations/s is the closed loop's steady-state rate c ÷ mean latency (Little's law), which a " +
      "batch's ramp-up and drain do not bias (completed ÷ wall time is shown for context); " +
      'R2 = retrysafe latency ÷ bare latency; R4 = replay p50 ÷ plain Fastify endpoint p50. ' +
      'Each ratio divides two numbers measured in this run, interleaved (ABBA rounds).',
  );
  out.push('');
  const worst = (vals: number[], pick: (a: number, b: number) => number) => {
    const finite = vals.filter(Number.isFinite);
    return finite.length ? finite.reduce((a, b) => pick(a, b)) : Number.NaN;
  };
  const rows: Array<Array<string | number>> = [
    ['R1 payment ÷ bare 1 activity (ops/s)', ...r.ratios.map((x) => n2(x.r1Payment)), `≥ ${TARGETS.r1}`],
    ['R1 checkout ÷ bare 3 activities (ops/s)', ...r.ratios.map((x) => n2(x.r1Checkout)), `≥ ${TARGETS.r1}`],
    ['R1 payment, completed ÷ wall time (context)', ...r.ratios.map((x) => n2(x.r1PaymentWall)), '—'],
    ['R1 checkout, completed ÷ wall time (context)', ...r.ratios.map((x) => n2(x.r1CheckoutWall)), '—'],
    ['R2 payment p50', ...r.ratios.map((x) => n2(x.r2PaymentP50)), '—'],
    ['R2 payment p99', ...r.ratios.map((x) => n2(x.r2PaymentP99)), `≤ ${TARGETS.r2p99}`],
    ['R2 checkout p50', ...r.ratios.map((x) => n2(x.r2CheckoutP50)), '—'],
    ['R2 checkout p99', ...r.ratios.map((x) => n2(x.r2CheckoutP99)), `≤ ${TARGETS.r2p99}`],
    ['R4 replay p50 ÷ plain p50', ...r.ratios.map((x) => n2(x.r4)), `≤ ${TARGETS.r4}`],
    ['R4 at p99 (context)', ...r.ratios.map((x) => n2(x.r4P99)), '—'],
    ["R4 from mean latency (Little's law, context)", ...r.ratios.map((x) => n2(x.r4Mean)), '—'],
  ];
  out.push(table(['ratio', ...cs.map((c) => `c=${c}`), 'target'], rows));
  out.push('');
  const r4Worst = worst(
    r.ratios.map((x) => x.r4),
    Math.max,
  );
  out.push(
    `R4 (worst over c): ${n2(r4Worst)} against its target ≤ ${TARGETS.r4}: ${check(r4Worst <= TARGETS.r4)}. ` +
      `Bare baselines in this run: ${r.activityKind?.used ?? 'regular'} activities.`,
  );
  out.push('');
  const clocks = [r.machine.clock.start, r.machine.clock.end].filter((c): c is NonNullable<typeof c> => c !== undefined);
  const worstClock = clocks.reduce((a, c) => (c.stalledShare > a.stalledShare ? c : a), clocks[0]!);
  const troubled = r.scenarios.filter((s) => clockTrouble(s));
  if (troubled.length) {
    out.push(
      `**Clock**: in ${troubled.map((s) => `${KIND_LABEL[s.kind]} c=${s.concurrency}`).join(', ')} more than a fifth of the latency ` +
        'samples read ≤ 0 ms: the monotonic clock stood still across loopback round trips (this VM, under load). Their ' +
        'percentiles are not measurements, so R4 is not computed there ("n/a"); the mean latencies from throughput ' +
        '(Little\'s law, "R4 from mean latency") do not depend on the clock.',
    );
    out.push('');
  }
  if (worstClock.stalledShare > 0.05) {
    out.push(
      `**Clock warning**: this machine's monotonic clock stood still in ${(worstClock.stalledShare * 100).toFixed(0)}% of ` +
        `back-to-back reads and moved in steps of up to ${worstClock.maxStepMs.toFixed(1)} ms, so single sub-millisecond ` +
        'latencies (replays, the plain endpoint) read as 0 or as a step; their percentiles are unreliable in this run. ' +
        'The mean latencies from throughput (Little\'s law) do not depend on it: see "R4 from mean latency".',
    );
    out.push('');
  }
  if (r.skipped.length) {
    out.push(`**Time budget ran out** (a busy machine): left out ${r.skipped.join(', ')}.`);
    out.push('');
  }
  out.push(`![latency chart](${files.png ?? files.svg})`);
  if (!files.png) out.push('', `_PNG not rendered: ${r.chart.pngNote}. The SVG above is the chart._`);
  out.push('');

  out.push('## 1–2. New operations vs bare Temporal');
  out.push('');
  out.push(
    'End-to-end latency from the first POST to the terminal answer (`Prefer` not sent: the API waits up to 10 s, ' +
      'a 202 would be followed by GETs until terminal); the bare workflow is `client.workflow.execute()` ' +
      '(start + result) from the bench process, on its own task queue and worker process with the same worker options.',
  );
  for (const [own, bare, acts] of [
    ['payment', 'bare1', 1],
    ['checkout', 'bare3', 3],
  ] as Array<[Kind, Kind, number]>) {
    out.push('');
    out.push(`### ${own} vs bare workflow with ${acts} no-op activit${acts === 1 ? 'y' : 'ies'}`);
    out.push('');
    out.push(
      table(
        [
          'c',
          'R1',
          'R2 p50',
          'R2 p99',
          `${own} ops/s`,
          'bare ops/s',
          `${own} p50 / p95 / p99 ms`,
          'bare p50 / p95 / p99 ms',
          'n (each)',
          'errors',
          '202s',
          '503s retried',
        ],
        cs.map((c) => {
          const s = find(r.scenarios, own, c);
          const b = find(r.scenarios, bare, c);
          const row = r.ratios.find((x) => x.concurrency === c)!;
          return [
            c,
            n2(own === 'payment' ? row.r1Payment : row.r1Checkout),
            n2(own === 'payment' ? row.r2PaymentP50 : row.r2CheckoutP50),
            n2(own === 'payment' ? row.r2PaymentP99 : row.r2CheckoutP99),
            n1(s?.steadyOpsPerSec ?? Number.NaN),
            n1(b?.steadyOpsPerSec ?? Number.NaN),
            pct(s),
            pct(b),
            `${s?.ops ?? 0} / ${b?.ops ?? 0}`,
            `${s?.errors ?? 0} / ${b?.errors ?? 0}`,
            s?.answered202 ?? 0,
            s?.retried503 ?? 0,
          ];
        }),
      ),
    );
  }
  const errs = r.scenarios.filter((s) => s.errors > 0);
  if (errs.length) {
    out.push('');
    out.push('Errors: ' + errs.map((s) => `${s.kind} c=${s.concurrency}: ${s.errorSamples.join('; ')}`).join(' · '));
  }
  out.push('');

  if (r.scenarios.some((s) => s.kind === 'payment-direct')) {
    out.push('### Where the gap is: bookkeeping, saga, API');
    out.push('');
    out.push(
      'Measured once (first round) next to the same batches: "+ bookkeeping" is the bare workflow with exactly ' +
        "retrysafe's memo and search-attribute upserts (one of each when a step starts and at the end) and the API's " +
        'start memo and search attributes; "no API" is the retrysafe workflow (real downstream calls, compensation ' +
        "stack, bookkeeping) started by a Temporal client with the API's start options and its result awaited. So " +
        'bare → + bookkeeping prices the bookkeeping, → no API the saga and its downstream calls, → retrysafe the HTTP API.',
    );
    out.push('');
    const p5099 = (x?: ScenarioResult) => (x ? `${ms(x.latencyMs.p50)} / ${ms(x.latencyMs.p99)}` : 'n/a');
    const allCpu = (x?: ScenarioResult) => (x ? Object.values(x.usage.cpuMs).reduce((a, b) => a + b, 0) / x.ops : Number.NaN);
    out.push(
      table(
        [
          'operation',
          'c',
          'ops/s: bare → + bookkeeping → no API → retrysafe',
          'p50 / p99 ms: bare',
          '+ bookkeeping',
          'no API',
          'retrysafe',
          'CPU ms/op (all processes): bare → + bookkeeping → no API → retrysafe',
        ],
        (['payment', 'checkout'] as const).flatMap((own) =>
          cs.map((c) => {
            const bare = own === 'payment' ? 'bare1' : 'bare3';
            const steps = [
              find(r.scenarios, bare, c),
              find(r.scenarios, `${bare}-tracked`, c),
              find(r.scenarios, `${own}-direct`, c),
              find(r.scenarios, own, c),
            ];
            return [
              own,
              c,
              steps.map((x) => n1(x?.steadyOpsPerSec ?? Number.NaN)).join(' → '),
              ...steps.map(p5099),
              steps.map((x) => n1(allCpu(x))).join(' → '),
            ];
          }),
        ),
      ),
    );
    out.push('');
  }

  out.push('## 3. Replays vs a plain Fastify endpoint');
  out.push('');
  out.push(
    'Retries (same key, same body) of payments that finished during this run, answered by the API from its cache of ' +
      'terminal outcomes; the baseline is a Fastify route that parses the same JSON body and sends a cached body of ' +
      'the same size. "No cache" is a second API process with `RETRYSAFE_CACHE_SIZE=0`: what a replay costs when it ' +
      'has to ask Temporal.',
  );
  out.push('');
  out.push(
    table(
      [
        'c',
        'R4 (p50)',
        'p99 ratio',
        'replay req/s',
        'plain req/s',
        'replay p50 / p95 / p99 ms',
        'plain p50 / p95 / p99 ms',
        'no cache p50 / p95 / p99 ms',
        'Temporal RPCs per replay',
        'per uncached replay',
      ],
      cs.map((c) => {
        const s = find(r.scenarios, 'replay', c);
        const p = find(r.scenarios, 'plain', c);
        const u = find(r.scenarios, 'replay-uncached', c);
        const row = r.ratios.find((x) => x.concurrency === c)!;
        return [
          c,
          n2(row.r4),
          n2(row.r4P99),
          n1(s?.opsPerSec ?? Number.NaN),
          n1(p?.opsPerSec ?? Number.NaN),
          pct(s),
          pct(p),
          pct(u),
          s ? rpcsPerOp(s) : 'n/a',
          u ? rpcsPerOp(u) : 'n/a',
        ];
      }),
    ),
  );
  out.push('');

  out.push('## 4. Contention: 100 identical concurrent requests for one new key');
  out.push('');
  out.push(
    "Executions: runs of the workflow ID in Temporal visibility. Claims won: the API's `retrysafe_operations_started_total`. " +
      "Charges: money the bank moved for the trial's own account ÷ the amount. Units: stock taken from the trial's own SKU. " +
      'Winner: the answer without `Idempotent-Replayed`; waiters: the others.',
  );
  out.push('');
  out.push(
    table(
      [
        'type',
        'executions',
        'claims won',
        'charges',
        'units held',
        'answers',
        '503s retried',
        'winners',
        'distinct outcomes',
        'winner ms',
        'waiters p50 / p99 ms',
        'waiter p50 ÷ winner',
        'API RPCs in the burst',
      ],
      r.contention.map((t) => [
        t.type,
        t.executions,
        t.claimsWon,
        t.charges,
        t.unitsTaken ?? '—',
        Object.entries(t.statuses)
          .map(([s, k]) => `${k}×${s}`)
          .join(', '),
        t.retried503,
        t.winners,
        t.distinctOutcomes,
        ms(t.winnerLatencyMs),
        `${ms(t.waiterLatencyMs.p50)} / ${ms(t.waiterLatencyMs.p99)}`,
        n2(t.waiterOverWinner),
        Object.entries(t.usage.rpcs)
          .map(([m, v]) => `${m} ${v}`)
          .join(', '),
      ]),
    ),
  );
  out.push('');

  if (r.peers?.length) {
    out.push('## 5. The peers: the same checkout on Restate and on DBOS Transact');
    out.push('');
    out.push(
      "Each peer runs retrysafe's checkout saga (bench/peers: the same request, the same derived keys, compensations " +
        "registered before their step) against this run's bank and reservation service, behind the same HTTP contract " +
        "(POST /v1/checkouts with an Idempotency-Key, answered once the checkout ended). Driven by the bench's own client " +
        "and closed loop, interleaved with retrysafe's checkout batches (ABBA). A peer batch has more checkouts than " +
        "retrysafe's (each takes a fraction of the time), so that its rate can be read. CPU: every process that does the " +
        "checkout's work (the PostgreSQL server with all its backends), the sandboxes included, ÷ checkouts; the driver is not counted.",
    );
    out.push('');
    const systems: Kind[] = ['checkout', 'bare3', ...r.peers.map((p) => p.peer as Kind)];
    out.push(
      table(
        ['system', 'c', 'ops/s', 'p50 / p95 / p99 ms', 'n', 'errors', 'CPU ms/checkout', 'of it'],
        cs.flatMap((c) =>
          systems.map((k) => {
            const s = find(r.scenarios, k, c);
            const cpu = s ? systemCpu(s) : undefined;
            return [
              KIND_LABEL[k],
              c,
              n1(s?.steadyOpsPerSec ?? Number.NaN),
              pct(s),
              s?.ops ?? 0,
              s?.errors ?? 0,
              n1(cpu?.total ?? Number.NaN),
              cpu ? cpu.parts.map(([p, v]) => `${PART_LABEL[p] ?? p} ${n1(v)}`).join(' · ') : '',
            ];
          }),
        ),
      ),
    );
    out.push('');
    out.push('Replays (a retry of a finished checkout, same key and body):');
    out.push('');
    out.push(
      table(
        ['system', 'c', 'req/s', 'p50 / p95 / p99 ms', "mean (Little's law) ms", 'n', 'errors'],
        cs.flatMap((c) =>
          (['replay-checkout', ...r.peers!.map((p) => `replay-${p.peer}` as Kind)] as Kind[]).map((k) => {
            const s = find(r.scenarios, k, c);
            return [
              KIND_LABEL[k],
              c,
              n1(s?.opsPerSec ?? Number.NaN),
              pct(s),
              ms(s?.littleMeanMs ?? Number.NaN),
              s?.ops ?? 0,
              s?.errors ?? 0,
            ];
          }),
        ),
      ),
    );
    out.push('');
    out.push(
      table(
        ['peer', 'versions', 'durability (set, and checked where the engine can be asked)', 'processes'],
        r.peers.map((p) => [
          p.peer,
          Object.entries(p.versions)
            .map(([k, v]) => `${k} ${v}`)
            .join(', '),
          p.durability.join('; '),
          p.processes.join(', '),
        ]),
      ),
    );
    out.push('');
  }

  if (r.timeline?.length) {
    out.push('## 6. Where the time goes');
    out.push('');
    out.push(
      `Inside Temporal, from the histories of ${r.timeline[0]!.sampled} operations per kind at c=${cs[0]} (medians of each phase's ` +
        'per-operation total, so the rows need not add up exactly): each workflow task from scheduled to started (waiting ' +
        'for the history service to dispatch it and a worker to poll it) and from started to completed (the worker running ' +
        'the workflow code), each activity from scheduled to started and started to completed, each local activity from ' +
        "its task's start (or the previous local activity's completion) to the completion its marker records: it runs " +
        'inside the workflow task, so that row is part of the task\'s. "Outside the history" is the ' +
        "client's end-to-end p50 minus start → close: the API, the start RPC and the wait for the result. An activity " +
        'dispatch near 0 ms is eager dispatch: the worker got the activity in the answer to its workflow task completion.',
    );
    out.push('');
    for (const [own, bare] of [
      ['checkout', 'bare3'],
      ['payment', 'bare1'],
    ] as const) {
      const a = r.timeline.find((t) => t.kind === own);
      const b = r.timeline.find((t) => t.kind === bare);
      if (!a) continue;
      const phases = [...new Set([...a.phases.map((p) => p.phase), ...(b?.phases.map((p) => p.phase) ?? [])])];
      const value = (t: typeof a | undefined, phase: string) => {
        const p = t?.phases.find((x) => x.phase === phase);
        return p ? ms(p.medianMs) : '—';
      };
      const label = (phase: string) => {
        const m = /^step (\d+)/.exec(phase);
        if (!m) return phase;
        const i = Number(m[1]) - 1;
        return `${phase} — ${a.stepNames[i] ?? '?'}${b?.stepNames[i] ? ` / ${b.stepNames[i]}` : ''}`;
      };
      const e2e = (k: Kind, t: typeof a | undefined) => {
        const s = find(r.scenarios, k, cs[0]!);
        return s && t ? s.latencyMs.p50 - t.startToCloseMs : Number.NaN;
      };
      out.push(`### ${own} vs ${KIND_LABEL[bare]} (${r.activityKind?.used ?? 'regular'} activities), ms`);
      out.push('');
      out.push(
        table(
          ['phase', own, KIND_LABEL[bare]],
          [
            ...phases.map((ph) => [label(ph), value(a, ph), value(b, ph)]),
            ['start → close (in the history)', ms(a.startToCloseMs), ms(b?.startToCloseMs ?? Number.NaN)],
            ['workflow tasks per operation', a.workflowTasks, b?.workflowTasks ?? '—'],
            [
              `client end-to-end p50, c=${cs[0]}`,
              ms(find(r.scenarios, own, cs[0]!)?.latencyMs.p50 ?? Number.NaN),
              ms(find(r.scenarios, bare, cs[0]!)?.latencyMs.p50 ?? Number.NaN),
            ],
            ['outside the history (API, start RPC, result)', ms(e2e(own, a)), ms(e2e(bare, b))],
          ],
        ),
      );
      out.push('');
    }
    out.push(
      'CPU per operation by process (user + system, all threads, from /proc; PostgreSQL with its backends), at each ' +
        "concurrency: where the machine's two cores go. The bench process is the Temporal client of the bare workflows, " +
        'and the HTTP client of everything else (not counted there).',
    );
    out.push('');
    const cpuKinds = (['payment', 'bare1', 'checkout', 'bare3', 'restate', 'dbos'] as Kind[]).filter((k) =>
      r.scenarios.some((s) => s.kind === k),
    );
    // One column per role: the baseline's worker shares the worker column.
    const column = (p: string) => (p === 'baselineWorker' ? 'worker' : p);
    const columns = [...new Set(cpuKinds.flatMap((k) => (PARTS[k] ?? []).map(column)))];
    out.push(
      table(
        ['operation', 'c', 'all ms/op', ...columns.map((p) => PART_LABEL[p] ?? p)],
        cpuKinds.flatMap((k) =>
          cs.map((c) => {
            const s = find(r.scenarios, k, c);
            const cpu = s ? systemCpu(s) : undefined;
            return [
              KIND_LABEL[k],
              c,
              n1(cpu?.total ?? Number.NaN),
              ...columns.map((col) => {
                const p = (PARTS[k] ?? []).find((x) => column(x) === col);
                return p && s ? n1(cpuPerOp(s, p)) : '';
              }),
            ];
          }),
        ),
      ),
    );
    out.push('');
  }

  out.push('## 7. State transitions and history per operation');
  out.push('');
  out.push(
    'Medians over a sample of executions from this run (DescribeWorkflowExecution: `stateTransitionCount`, `historyLength`, `historySizeBytes`).',
  );
  out.push('');
  const hist = (k: string) => r.history.find((h) => h.kind === k);
  out.push(
    table(
      ['operation', 'state transitions', 'vs bare', 'history events', 'vs bare', 'history bytes', 'vs bare', 'sampled'],
      [
        ['payment', 'bare1'],
        ['checkout', 'bare3'],
        ['bare1-tracked', 'bare1'],
        ['bare3-tracked', 'bare3'],
        ['bare1', ''],
        ['bare3', ''],
      ]
        .filter(([k]) => hist(k!))
        .map(([k, b]) => {
          const h = hist(k!);
          const base = b ? hist(b) : undefined;
          const diff = (a?: number, c?: number) =>
            a === undefined || c === undefined ? '—' : `${a - c >= 0 ? '+' : ''}${a - c} (×${n2(a / c)})`;
          return [
            KIND_LABEL[k as Kind],
            h?.stateTransitions ?? 'n/a',
            diff(h?.stateTransitions, base?.stateTransitions),
            h?.historyEvents ?? 'n/a',
            diff(h?.historyEvents, base?.historyEvents),
            h?.historyBytes ?? 'n/a',
            diff(h?.historyBytes, base?.historyBytes),
            h?.sampled ?? 0,
          ];
        }),
    ),
  );
  out.push('');
  const types = [...new Set(r.history.flatMap((h) => Object.keys(h.events)))];
  out.push('Event types in one history of each:');
  out.push('');
  out.push(
    table(
      ['event type', ...r.history.map((h) => KIND_LABEL[h.kind as Kind] ?? h.kind)],
      types.map((t) => [t, ...r.history.map((h) => h.events[t] ?? 0)]),
    ),
  );
  out.push('');

  out.push('## 8. CPU time and peak memory per operation');
  out.push('');
  out.push(
    'CPU: user + system time of each process over the scenario (all threads, /proc/<pid>/stat) ÷ operations. ' +
      `Peak: the resident-set high-water mark (VmHWM) during the scenario${r.scenarios.every((s) => s.usage.peakReset) ? ', reset at its start' : ' (could not be reset: peak since start)'}. ` +
      "The bench process drives the load and is the bare workflows' Temporal client.",
  );
  out.push('');
  out.push(
    table(
      [
        'scenario',
        'c',
        'worker CPU ms/op',
        'worker peak MiB',
        'API CPU ms/op',
        'Temporal CPU ms/op',
        'bank ms/op',
        'reservations ms/op',
        'bench (client) ms/op',
        'all ours ms/op',
        'API Temporal RPCs/op',
        'machine busy',
        'of it not ours',
      ],
      r.scenarios
        .filter((s) => !PEER_KINDS.has(s.kind))
        .map((s) => {
          const workerName = s.kind.startsWith('bare') ? 'baselineWorker' : 'worker';
          const total = Object.entries(s.usage.cpuMs).reduce((a, [, v]) => a + v, 0) / s.ops;
          const apiName = s.kind === 'replay-uncached' ? 'apiNoCache' : s.kind === 'plain' ? 'plain' : 'api';
          return [
            KIND_LABEL[s.kind],
            s.concurrency,
            n2(cpuPerOp(s, workerName)),
            n1(s.usage.peakRssMb[workerName] ?? Number.NaN),
            n2(cpuPerOp(s, apiName)),
            n2(cpuPerOp(s, 'temporal')),
            n2(cpuPerOp(s, 'bank')),
            n2(cpuPerOp(s, 'reservations')),
            n2(cpuPerOp(s, 'orchestrator')),
            n2(total),
            ['plain', 'bare1', 'bare3', 'bare1-tracked', 'bare3-tracked', 'payment-direct', 'checkout-direct'].includes(s.kind)
              ? '—'
              : rpcsPerOp(s),
            s.usage.capacityMs > 0 ? `${((s.usage.machineBusyMs / s.usage.capacityMs) * 100).toFixed(0)}%` : 'n/a',
            s.usage.machineBusyMs > 0 ? `${((s.usage.foreignMs / s.usage.machineBusyMs) * 100).toFixed(0)}%` : 'n/a',
          ];
        }),
    ),
  );
  out.push('');
  out.push(
    'For bare workflows the worker column is the baseline worker; for the plain endpoint the API column is the plain server. ' +
      '"Machine busy": all cores\' busy time over the scenario ÷ capacity (from /proc/stat, steal included); "not ours": the share of it ' +
      'spent by processes outside this run (other work on a shared machine), which slows every scenario it overlaps.',
  );
  const anomalies = r.scenarios.filter((s) => s.nonPositiveSamples > 0);
  if (anomalies.length) {
    out.push('');
    out.push(
      `Clock: ${anomalies.map((s) => `${KIND_LABEL[s.kind]} c=${s.concurrency}: ${s.nonPositiveSamples}`).join(', ')} latency samples were ≤ 0 ms ` +
        '(the monotonic clock did not advance across a loopback round trip, as happens on this VM under load); they are kept in the percentiles.',
    );
  }
  const capped = r.scenarios.filter((s) => s.batchesCappedByTime > 0);
  if (capped.length) {
    out.push('');
    out.push(
      `Time-bounded batches (the count was not reached within the batch's time bound, ${(r.settings.batchMaxMs / 1000).toFixed(0)} s for new operations; ` +
        `n is what finished): ${capped.length === r.scenarios.length ? 'all' : capped.map((s) => `${KIND_LABEL[s.kind]} c=${s.concurrency}`).join(', ')}.`,
    );
  }
  out.push('');

  if (r.ablation) {
    const a = r.ablation;
    out.push("## 9. Ablation of the embedded server's tuning");
    out.push('');
    out.push(
      `Each row a fresh engine (dev server on a new SQLite file, API, both workers) on this run's sandboxes, with the run's ` +
        "own engine and the peers stopped: every setting, none (the dev server's own defaults), then each one switched off " +
        `in turn. Per row: ${a.counts.opsC1} checkouts and ${a.counts.opsC1} bare three-step workflows ` +
        `(${r.activityKind?.used ?? 'regular'} activities) at c=1, ${a.counts.opsC32} of each at c=32, after ${a.counts.warmupOps} ` +
        `of each to warm up; ops/s by Little's law as above. Settings from ${a.tuningSource}.`,
    );
    out.push('');
    const base = a.rows.find((x) => x.name === ALL_ON);
    const delta = (v: number, b: number | undefined, lowerIsBetter: boolean) => {
      if (b === undefined || !Number.isFinite(v) || !Number.isFinite(b) || b === 0) return '';
      const x = v / b;
      return ` (×${n2(x)}${Math.abs(x - 1) >= 0.15 ? ((lowerIsBetter ? x > 1 : x < 1) ? ' worse' : ' better') : ''})`;
    };
    out.push(
      table(
        [
          'server',
          'checkout c=1 p50 ms',
          'checkout c=32 ops/s',
          'bare c=1 p50 ms',
          'bare c=32 ops/s',
          'n (c=1 / c=32)',
          'errors',
        ],
        a.rows.map((row) => [
          row.name,
          `${ms(row.checkout.c1P50Ms)}${delta(row.checkout.c1P50Ms, base?.checkout.c1P50Ms, true)}`,
          `${n1(row.checkout.c32OpsPerSec)}${delta(row.checkout.c32OpsPerSec, base?.checkout.c32OpsPerSec, false)}`,
          `${ms(row.bare.c1P50Ms)}${delta(row.bare.c1P50Ms, base?.bare.c1P50Ms, true)}`,
          `${n1(row.bare.c32OpsPerSec)}${delta(row.bare.c32OpsPerSec, base?.bare.c32OpsPerSec, false)}`,
          `${row.checkout.n.c1}+${row.bare.n.c1} / ${row.checkout.n.c32}+${row.bare.n.c32}`,
          row.checkout.errors + row.bare.errors,
        ]),
      ),
    );
    out.push('');
    if (a.skipped.length) {
      out.push(
        `**Ablation time budget ran out** (${(a.counts.budgetMs / 60_000).toFixed(0)} min): left out ${a.skipped.join('; ')}.`,
      );
      out.push('');
    }
    if (a.settings.length) {
      out.push(
        table(
          ['setting', 'arguments', 'why'],
          a.settings.map((t) => [t.name, `\`${t.args.join(' ')}\``, t.why]),
        ),
      );
      out.push('');
    }
    out.push('(×: the row ÷ the first row; "worse"/"better" when it moved by 15 % or more.)');
    out.push('');
  }

  if (r.startup) {
    out.push('## Worker start-up');
    out.push('');
    out.push(
      `\`node --import tsx worker/main.ts\` from spawn to its "worker ready" line, ${r.startup.workerMainMs.length} times in a row ` +
        `(${r.startup.note}): ${r.startup.workerMainMs.map((v) => `${(v / 1000).toFixed(2)} s`).join(', ')}. ` +
        `(The bench's own workers use bundles built once at the start of the run: ${(r.settings.bundleMs / 1000).toFixed(1)} s for both, in parallel with Temporal's start.)`,
    );
    out.push('');
  }

  if (r.profiles.length) {
    out.push('## CPU profiles (--profile)');
    for (const p of r.profiles) {
      out.push('');
      out.push(`### ${p.process} — ${p.file} (${(p.sampledMs / 1000).toFixed(1)} s sampled, idle excluded)`);
      out.push('');
      out.push(
        table(
          ['area', 'self ms', 'share'],
          p.byArea.map((a) => [a.area, a.selfMs.toFixed(0), `${(a.share * 100).toFixed(1)}%`]),
        ),
      );
      out.push('');
      out.push(
        table(
          ['function', 'where', 'self ms', 'share'],
          p.top.map((t) => [`\`${t.fn}\``, t.where, t.selfMs.toFixed(0), `${(t.share * 100).toFixed(1)}%`]),
        ),
      );
    }
    out.push('');
  }

  out.push('## Machine, versions, flags');
  out.push('');
  const m = r.machine;
  out.push(
    table(
      ['what', 'value'],
      [
        ['CPU', `${m.cpuModel}, ${m.cores} cores (shared)`],
        ['memory', `${m.memoryGiB} GiB`],
        ['kernel', m.kernel],
        [
          'load average (1, 5, 15 min)',
          `${m.loadAverage} at the start${m.loadAverageEnd ? `, ${m.loadAverageEnd} at the end` : ''}`,
        ],
        [
          'latency clock (performance.now)',
          clocks
            .map(
              (c, i) =>
                `${i === 0 ? 'start' : 'end'}: ${(c.stalledShare * 100).toFixed(0)}% of reads stalled, largest step ${c.maxStepMs.toFixed(2)} ms`,
            )
            .join('; '),
        ],
        ['Node.js', m.node],
        ['Temporal CLI', r.temporal.cli],
        ...Object.entries(m.packages).map(([k, v]) => [k, v]),
        ['Temporal dev server argv', `\`${r.temporal.argv.join(' ')}\``],
        [
          'SQLite pragmas passed (`--sqlite-pragma`)',
          r.temporal.pragmasPassed.length
            ? r.temporal.pragmasPassed.join(', ')
            : "none: the dev server's defaults (connect attributes `mode=rwc` only, one connection)",
        ],
        ['SQLite journal_mode (read back from the file)', r.temporal.journalMode ?? 'unknown'],
        [
          'SQLite synchronous',
          r.temporal.pragmasPassed.find((p) => p.startsWith('synchronous=')) ??
            "not set: SQLite's default, FULL (each commit is fsynced)",
        ],
        ['data directory filesystem', `${r.temporal.dataFs} — a file on disk, not an in-memory database`],
        [
          'server tuning',
          r.tuning ? `${r.tuning.settings.map((t) => t.name).join(', ') || 'none'} (from ${r.tuning.source})` : 'n/a',
        ],
        [
          'activity kind of the steps (and the bare baseline)',
          r.activityKind ? `${r.activityKind.used} (${r.activityKind.how})` : 'regular',
        ],
        ['log level of the stack', r.settings.logLevel],
        ['worker options (both workers)', r.settings.workerOptions],
        ['API cache', r.settings.apiCache],
        ['counts', `\`${JSON.stringify(r.settings.counts)}\``],
      ],
    ),
  );
  out.push('');
  out.push(
    `Reproduce: \`${r.command}\` (this run). The full report is \`npm run bench -- --peers\` (the peers and the ablation, ` +
      '10–15 min on a quiet 2-core machine); `npm run bench -- --quick` takes a few minutes; `--help` lists the flags. `node --import tsx bench/render.ts <results.json>` re-renders a report from its JSON.',
  );
  out.push('');
  return out.join('\n');
}
