// The Markdown report of a run: verdicts and ratios first, then each scenario's table, the
// machine, the versions and the flags. Everything in it comes from the results JSON beside
// it. Each section is its own module and prints nothing when the run has no input for it;
// this list is the report's order.
import type { BenchResults } from '../results.js';
import { ablation } from './ablation.js';
import { contention } from './contention.js';
import { fair } from './fair.js';
import { reportContext, type ReportFiles, type Section } from './context.js';
import { gap } from './gap.js';
import { header } from './header.js';
import { history } from './history.js';
import { machine } from './machine.js';
import { newOperations } from './new-operations.js';
import { overload } from './overload.js';
import { peers } from './peers.js';
import { profiles } from './profiles.js';
import { ratios } from './ratios.js';
import { replays } from './replays.js';
import { startup } from './startup.js';
import { timeGoes } from './time.js';
import { usage } from './usage.js';
import { verdicts } from './verdicts.js';

export type { ReportFiles } from './context.js';

export const SECTIONS: readonly Section[] = [
  header,
  verdicts,
  ratios,
  newOperations,
  fair,
  gap,
  replays,
  contention,
  peers,
  timeGoes,
  history,
  usage,
  ablation,
  overload,
  startup,
  profiles,
  machine,
];

/** A run of the overload section alone (`--overload`) measured nothing the other sections show. */
const OVERLOAD_SECTIONS: readonly Section[] = [header, verdicts, overload, machine];

export function markdownReport(r: BenchResults, files: ReportFiles): string {
  const ctx = reportContext(r, files);
  const sections = r.scenarios.length === 0 && r.overload ? OVERLOAD_SECTIONS : SECTIONS;
  return sections.flatMap((section) => section(ctx)).join('\n');
}
