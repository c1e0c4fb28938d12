// Sections 1–2: each of retrysafe's operations against the bare workflow with as many
// no-op activities, at every concurrency, and the errors any scenario of the run met.
import { find } from '../results.js';
import type { Section } from './context.js';
import { activities, n2, sideBySide, table } from './format.js';
import { operationsOf, ratiosOf } from './kinds.js';

export const newOperations: Section = ({ r, cs }) => {
  const out = ['## 1–2. New operations vs bare Temporal', ''];
  out.push(
    'End-to-end latency from the first POST to the terminal answer (`Prefer` not sent: the API waits up to 10 s, ' +
      'a 202 would be followed by GETs until terminal); the bare workflow is `client.workflow.execute()` ' +
      '(start + result) from the bench process, on its own task queue and worker process with the same worker options.',
  );
  for (const op of operationsOf(r)) {
    out.push('');
    out.push(`### ${op.own} vs bare workflow with ${activities(op.activities, 'no-op ')}`);
    out.push('');
    out.push(
      table(
        [
          'c',
          'R1',
          'R2 p50',
          'R2 p99',
          `${op.own} ops/s`,
          'bare ops/s',
          `${op.own} p50 / p95 / p99 ms`,
          'bare p50 / p95 / p99 ms',
          'n (each)',
          'errors',
          '202s',
          '503s retried',
        ],
        cs.map((c) => {
          const s = find(r.scenarios, op.own, c);
          const b = find(r.scenarios, op.bare, c);
          const row = ratiosOf(
            r.ratios.find((x) => x.concurrency === c)!,
            op,
          );
          return [
            c,
            n2(row.r1),
            n2(row.r2p50),
            n2(row.r2p99),
            ...sideBySide(s, b, 'steadyOpsPerSec'),
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
  return out;
};
