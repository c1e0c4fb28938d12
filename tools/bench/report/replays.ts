// Section 3: a retry of a finished payment, answered from the API's cache (and without
// it), against a plain Fastify endpoint that sends a cached body of the same size.
import { find } from '../results.js';
import type { Kind } from '../scenarios/measure.js';
import type { Section } from './context.js';
import { n2, pct, rpcsPerOp, sideBySide, table } from './format.js';

const REPLAY: Kind = 'replay';
const PLAIN: Kind = 'plain';
const UNCACHED: Kind = 'replay-uncached';

export const replays: Section = ({ r, cs }) => [
  '## 3. Replays vs a plain Fastify endpoint',
  '',
  'Retries (same key, same body) of payments that finished during this run, answered by the API from its cache of ' +
    'terminal outcomes; the baseline is a Fastify route that parses the same JSON body and sends a cached body of ' +
    'the same size. "No cache" is a second API process with `RETRYSAFE_CACHE_SIZE=0`: what a replay costs when it ' +
    'has to ask Temporal.',
  '',
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
      const s = find(r.scenarios, REPLAY, c);
      const p = find(r.scenarios, PLAIN, c);
      const u = find(r.scenarios, UNCACHED, c);
      const row = r.ratios.find((x) => x.concurrency === c)!;
      return [
        c,
        n2(row.r4),
        n2(row.r4P99),
        ...sideBySide(s, p, 'opsPerSec'),
        pct(u),
        s ? rpcsPerOp(s) : 'n/a',
        u ? rpcsPerOp(u) : 'n/a',
      ];
    }),
  ),
  '',
];
