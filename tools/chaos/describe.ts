// The plan of a chaos run in words: one paragraph of what it sends and breaks (with the
// schedule hash), and its fault schedule line by line, as `--plan` prints them.
import { countByType, type ChaosPlan } from './plan.js';
import { PROCESS_FAULT_RATES, type ProcessFault } from './fault-schedule.js';
import { FLOOD, TENANTS } from './settings.js';

/** `payment 12, checkout 9, transfer 10`: every type of the catalog, in its order. */
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
      `(${typeCounts(countByType(plan.flood.ops))}), limited to ${FLOOD.rate}, at most ${FLOOD.maxInFlight} in flight per API instance`,
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
