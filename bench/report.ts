// The Markdown report of a run: ratios first, then each scenario's table, the machine,
// the versions and the flags. Everything in it comes from the results JSON beside it.
import { TARGETS, clockTrouble, find, type BenchResults } from './results.js';
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
};

export function markdownReport(r: BenchResults, files: { json: string; svg: string; png: string | null }): string {
  const out: string[] = [];
  const cs = r.ratios.map((row) => row.concurrency);
  out.push(`# retrysafe benchmark — ${r.name}`);
  out.push('');
  out.push(
    `\`${r.command}\` · mode **${r.mode}** · started ${r.startedAt} · took ${(r.durationMs / 1000).toFixed(0)} s · ` +
      `${r.machine.cores} cores, ${r.machine.cpuModel}. Raw numbers: [${files.json}](${files.json}).` +
      (r.settings.profiled ? ' **Profiled run**: the API and the worker ran under --cpu-prof, which slows them.' : ''),
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
  const execs = r.contention.map((t) => t.executions);
  const effects = r.contention.map((t) => t.charges);
  const units = r.contention.filter((t) => t.unitsTaken !== null).map((t) => t.unitsTaken!);
  const verdict: Array<[string, string, boolean]> = [
    [
      'R1 (worst)',
      n2(
        worst(
          r.ratios.flatMap((x) => [x.r1Payment, x.r1Checkout]),
          Math.min,
        ),
      ),
      worst(
        r.ratios.flatMap((x) => [x.r1Payment, x.r1Checkout]),
        Math.min,
      ) >= TARGETS.r1,
    ],
    [
      'R2 p99 (worst)',
      n2(
        worst(
          r.ratios.flatMap((x) => [x.r2PaymentP99, x.r2CheckoutP99]),
          Math.max,
        ),
      ),
      worst(
        r.ratios.flatMap((x) => [x.r2PaymentP99, x.r2CheckoutP99]),
        Math.max,
      ) <= TARGETS.r2p99,
    ],
    [
      'R4 (worst)',
      n2(
        worst(
          r.ratios.map((x) => x.r4),
          Math.max,
        ),
      ),
      worst(
        r.ratios.map((x) => x.r4),
        Math.max,
      ) <= TARGETS.r4,
    ],
    ['contention: executions per key', execs.join(', '), execs.length > 0 && execs.every((e) => e === TARGETS.executions)],
    [
      'contention: downstream effects per key (charges; units held)',
      `${effects.join(', ')}${units.length ? `; ${units.join(', ')}` : ''}`,
      effects.length > 0 && effects.every((e) => e === TARGETS.effects) && units.every((u) => u === 1),
    ],
  ];
  out.push(
    table(
      ['target', 'measured', 'met'],
      verdict.map(([a, b, ok]) => [a, b, check(ok)]),
    ),
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

  out.push('## 5. State transitions and history per operation');
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

  out.push('## 6. CPU time and peak memory per operation');
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
      r.scenarios.map((s) => {
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
        ['load average at start', m.loadAverage],
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
        ['SQLite synchronous', "not set: SQLite's default, FULL (each commit is fsynced)"],
        ['data directory filesystem', `${r.temporal.dataFs} — a file on disk, not an in-memory database`],
        ['log level of the stack', r.settings.logLevel],
        ['worker options (both workers)', r.settings.workerOptions],
        ['API cache', r.settings.apiCache],
        ['counts', `\`${JSON.stringify(r.settings.counts)}\``],
      ],
    ),
  );
  out.push('');
  out.push(
    'Reproduce: `npm run bench` (under 10 min), `npm run bench -- --quick` (under 2 min on a quiet machine); `--help` lists the flags. `node --import tsx bench/render.ts <results.json>` re-renders a report from its JSON.',
  );
  out.push('');
  return out.join('\n');
}
