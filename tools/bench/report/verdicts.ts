// The verdicts first: each figure retrysafe is held to, judged against its target and
// moonshot from the run's own numbers.
import { computeVerdicts, type Met } from '../verdicts.js';
import type { Section } from './context.js';
import { table } from './format.js';

const MET: Record<Met, string> = {
  moonshot: '🌙 moonshot',
  target: '✅ target',
  missed: '❌ missed',
  'not measured': '— not measured',
};

export const verdicts: Section = ({ r }) => {
  // An older run's JSON has none stored: judge it now from its own numbers.
  const rows = r.verdicts ?? computeVerdicts(r);
  if (r.scenarios.length === 0 && r.overload) {
    return [
      '## Verdicts',
      '',
      "Each computed from this run's own numbers: the overload section alone (`--overload`), its targets as shipped.",
      '',
      table(
        ['figure', 'now', 'target', 'moonshot', 'verdict', 'from'],
        rows.map((v) => [v.figure, v.now, v.target, v.moonshot, MET[v.met], v.note ?? '']),
      ),
      '',
    ];
  }
  return [
    '## Verdicts',
    '',
    "Each computed from this run's own numbers. Peers: the same checkout saga (reserve → charge → confirm, keys derived " +
      "from the idempotency key, compensations registered first) on Restate and on DBOS Transact, against retrysafe's own " +
      'sandboxes, through the same HTTP driver at the same concurrencies' +
      (r.peers ? '' : ' — not in this run (`npm run bench -- --peers`)') +
      '. R1 and R2 divide by bare Temporal on the same server with activities of the same kind ' +
      `(${r.activityKind ? `**${r.activityKind.used}**, ${r.activityKind.how}` : 'regular'}).` +
      (r.operations?.some((op) => op.fair)
        ? " R1′ and the CPU per operation divide by bare Temporal making the operation's own keyed HTTP calls, as local activities, and nothing else."
        : ''),
    '',
    table(
      ['figure', 'now', 'target', 'moonshot', 'verdict', 'from'],
      rows.map((v) => [v.figure, v.now, v.target, v.moonshot, MET[v.met], v.note ?? '']),
    ),
    '',
  ];
};
