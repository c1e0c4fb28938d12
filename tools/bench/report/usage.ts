// Section 8: CPU time and peak memory per operation of every process of ours, scenario by
// scenario, with how busy the machine was and how much of that was other work.
import type { ScenarioResult } from '../scenarios/measure.js';
import type { Section } from './context.js';
import { cpuPerOp, n1, n2, rpcsPerOp, table } from './format.js';
import { kindFacts, label } from './kinds.js';

const share = (part: number, whole: number) => (whole > 0 ? `${((part / whole) * 100).toFixed(0)}%` : 'n/a');
const at = (s: ScenarioResult) => `${label(s.kind)} c=${s.concurrency}`;

export const usage: Section = ({ r }) => {
  const out = ['## 8. CPU time and peak memory per operation', ''];
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
      // A peer's scenarios have no columns here: their processes are in the peers' section.
      r.scenarios.flatMap((s) => {
        const cols = kindFacts(s.kind).usage;
        if (!cols) return [];
        const total = Object.entries(s.usage.cpuMs).reduce((a, [, v]) => a + v, 0) / s.ops;
        return [
          [
            label(s.kind),
            s.concurrency,
            n2(cpuPerOp(s, cols.worker)),
            n1(s.usage.peakRssMb[cols.worker] ?? Number.NaN),
            n2(cpuPerOp(s, cols.api)),
            n2(cpuPerOp(s, 'temporal')),
            n2(cpuPerOp(s, 'bank')),
            n2(cpuPerOp(s, 'reservations')),
            n2(cpuPerOp(s, 'orchestrator')),
            n2(total),
            cols.apiRpcs ? rpcsPerOp(s) : '—',
            share(s.usage.machineBusyMs, s.usage.capacityMs),
            share(s.usage.foreignMs, s.usage.machineBusyMs),
          ],
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
      `Clock: ${anomalies.map((s) => `${at(s)}: ${s.nonPositiveSamples}`).join(', ')} latency samples were ≤ 0 ms ` +
        '(the monotonic clock did not advance across a loopback round trip, as happens on this VM under load); they are kept in the percentiles.',
    );
  }
  const capped = r.scenarios.filter((s) => s.batchesCappedByTime > 0);
  if (capped.length) {
    out.push('');
    out.push(
      `Time-bounded batches (the count was not reached within the batch's time bound, ${(r.settings.batchMaxMs / 1000).toFixed(0)} s for new operations; ` +
        `n is what finished): ${capped.length === r.scenarios.length ? 'all' : capped.map(at).join(', ')}.`,
    );
  }
  out.push('');
  return out;
};
