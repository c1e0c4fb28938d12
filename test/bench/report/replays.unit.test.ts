// Section 3: cached and uncached replays against a plain endpoint, at each concurrency.
import { describe, expect, it } from 'vitest';
import { replays } from '../../../tools/bench/report/replays.js';
import { fixture, linesStarting, render } from './fixture.js';

const UNCACHED_RPCS =
  '3.00 (StartWorkflowExecution 1.00, GetWorkflowExecutionHistory 1.00, DescribeNamespace 0.00, DescribeWorkflowExecution 1.00)';

describe('report replays', () => {
  it('shows R4, rates, percentiles and Temporal RPCs per replay, cached and not', () => {
    const text = render(replays);
    expect(text.startsWith('## 3. Replays vs a plain Fastify endpoint\n\n')).toBe(true);
    expect(linesStarting(text, '| 1 |', '| 32 |')).toEqual([
      `| 1 | 1.78 | 2.12 | 852.4 | 1648.2 | 0.87 / 2.65 / 4.99 | 0.49 / 1.19 / 2.36 | 28.8 / 43.8 / 64.8 | 0 | ${UNCACHED_RPCS} |`,
      `| 32 | 1.54 | 2.62 | 2042.8 | 3346.5 | 12.6 / 30.6 / 76.5 | 8.14 / 22.1 / 29.2 | 362 / 620 / 728 | 0 | ${UNCACHED_RPCS} |`,
    ]);
    expect(text.endsWith('|\n')).toBe(true);
  });

  it('reads n/a for the replays a run did not measure, and keeps its ratios', () => {
    const r = fixture();
    r.scenarios = r.scenarios.filter((s) => !['replay', 'plain', 'replay-uncached'].includes(s.kind));
    expect(linesStarting(render(replays, r), '| 1 |')).toEqual(['| 1 | 1.78 | 2.12 | n/a | n/a | n/a | n/a | n/a | n/a | n/a |']);
  });
});
