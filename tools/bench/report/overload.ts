// Section 10: another tenant's flood. Per configuration (fairness on or off, the API's
// default admission or a rate for the flooding tenant): the steady tenant's latency alone
// and during each flood level, the flooding tenant's goodput against the engine's
// throughput at c=32, what each tenant was answered, and the audit once it was over.
import { AS_SHIPPED } from '../scenarios/overload-figures.js';
import type { Answers, OverloadRow } from '../scenarios/overload-figures.js';
import { ratio } from '../stats.js';
import type { Section } from './context.js';
import { check, ms, n1, n2, table } from './format.js';

/** `1200×200, 340×503 engine_busy`: a tenant's answers, most frequent first. */
function answers(a: Answers): string {
  return (
    Object.entries(a)
      .sort(([, x], [, y]) => y - x)
      .map(([status, n]) => `${n}×${status}`)
      .join(', ') || '—'
  );
}

const p5099 = (s: { p50: number; p99: number }) => `${ms(s.p50)} / ${ms(s.p99)}`;

export const overload: Section = ({ r }) => {
  const o = r.overload;
  if (!o) return [];
  const { flood, steady } = o.tenants;
  const c = o.counts;
  const out = ['## 10. Overload and fairness: one tenant floods, another pays one at a time', ''];
  out.push(
    `Each configuration a fresh engine on this run's sandboxes, its API with two API keys (tenants \`${flood}\` and ` +
      `\`${steady}\`), new ${o.type}s for both. \`${steady}\` first alone, one at a time (${c.idleOps}), then at c=32 ` +
      `(${c.referenceOps}; its rate, by Little's law, is the engine's throughput); then per flood level \`${flood}\` starts ` +
      `new ${o.type}s at that concurrency and, ${(c.rampMs / 1000).toFixed(1)} s later, \`${steady}\` makes ${c.floodOps} ` +
      `one at a time (n: how many it made before the flood's bound of ${(c.floodMaxMs / 1000).toFixed(0)} s); the flood stops when they are done. Both act as the API asks a client to: a 429 or 503 is retried ` +
      'with the same key after Retry-After, a 202 is polled to its end; latency runs from the first POST to the outcome, ' +
      "refusals waited out included. Goodput: the flooding tenant's successes ÷ the flood's duration. The flood's driver is " +
      'the bench process, on the same two cores.',
  );
  out.push('');
  const rowFigures = (row: OverloadRow) =>
    row.floods.map((f) => [
      row.name,
      f.concurrency,
      p5099(row.idle.latencyMs),
      p5099(f.b.latencyMs),
      f.b.ended,
      n2(ratio(f.b.latencyMs.p50, row.idle.latencyMs.p50)),
      n2(ratio(f.b.latencyMs.p99, row.idle.latencyMs.p99)),
      n1(f.aGoodput),
      n1(row.reference.opsPerSec),
      n2(ratio(f.aGoodput, row.reference.opsPerSec)),
      answers(f.a.answers),
      answers(f.b.answers),
      `${f.a.errors} / ${f.b.errors}`,
    ]);
  out.push(
    table(
      [
        'configuration',
        `${flood} c`,
        `${steady} p50 / p99 ms alone`,
        'during the flood',
        'n',
        'p50 ×',
        'p99 ×',
        `${flood} goodput/s`,
        'c=32 throughput/s',
        'goodput ÷ c=32',
        `${flood}'s answers`,
        `${steady}'s answers`,
        'errors',
      ],
      o.rows.flatMap(rowFigures),
    ),
  );
  out.push('');
  out.push(
    `Targets (${AS_SHIPPED}): \`${steady}\`'s p50 during the flood ≤ 2× alone (moonshot 1.2×), ` +
      `\`${flood}\`'s goodput ≥ 90% of the c=32 throughput. With a rate for \`${flood}\` its goodput is bounded by that rate by design.`,
  );
  out.push('');
  out.push(
    "After each configuration, read back: every operation a 200 or 202 accepted, each tenant's account at the bank, and every answer either tenant got.",
  );
  out.push('');
  out.push(
    table(
      [
        'configuration',
        'tenant limits',
        'accepted',
        'terminal',
        'succeeded',
        'bank moved = successes × amount',
        'dishonest answers',
        'nothing lost or doubled',
      ],
      o.rows.map((row) => [
        row.name,
        row.tenantLimits ? `\`${row.tenantLimits}\`` : 'none (default)',
        row.audit.accepted,
        row.audit.terminal,
        row.audit.succeeded,
        row.audit.accounts
          .map((a) => `${a.tenant} ${a.moved === a.expected ? '✅' : `❌ ${a.moved} ≠ ${a.expected}`}`)
          .join(', '),
        row.audit.badAnswers ? `${row.audit.badAnswers} (${row.audit.badSamples.join(', ')})` : '0',
        check(row.audit.ok),
      ]),
    ),
  );
  out.push('');
  const problems = o.rows.flatMap((row) => row.audit.problems.map((p) => `${row.name}: ${p}`));
  if (problems.length) {
    out.push(`**Problems**: ${problems.join('; ')}.`);
    out.push('');
  }
  const errors = o.rows.flatMap((row) =>
    row.floods.flatMap((f) => [...f.a.errorSamples, ...f.b.errorSamples].map((e) => `${row.name}, c=${f.concurrency}: ${e}`)),
  );
  if (errors.length) {
    out.push(`Errors: ${errors.slice(0, 5).join(' · ')}`);
    out.push('');
  }
  if (o.skipped.length) {
    out.push(`**Time budget ran out** (${(c.budgetMs / 60_000).toFixed(0)} min): left out ${o.skipped.join('; ')}.`);
    out.push('');
  }
  out.push(
    'Dishonest answers: a 5xx other than 503, or a 429 or 503 without Retry-After. "Answers" count every response, ' +
      "retries included; `503 engine_busy` is the API's bound on operations in flight (default 64 per instance, at most " +
      "three quarters of it for one tenant), `429` a tenant's rate. Fairness off: the dev server without its " +
      '`task-queue-fairness` setting (tasks dispatched first in, first out).',
  );
  out.push('');
  return out;
};
