// `npm run chaos -- --seed N --duration 5m --ops M`: a correctness audit, not a benchmark.
// A seeded, bounded chaos run on loopback (its own Temporal, two APIs, two workers, faulty
// sandboxes), then an audit of every ledger against the invariants (auditor.ts). Exit 0: no
// violation; 1: violations (or the run broke); 2: bad command line. The seed and the keys
// of every violation are printed for a replay.
import { writeFileSync } from 'node:fs';
import { buildPlan } from './plan.js';
import { parseChaosArgs, USAGE, UsageError, type ParsedArgs } from './options.js';
import { renderTable, renderViolations } from './report.js';
import { describePlan, describeSchedule } from './describe.js';
import { runChaos } from './run.js';

async function run(): Promise<number> {
  let args: ParsedArgs;
  try {
    args = parseChaosArgs(process.argv.slice(2));
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    console.error(`chaos: ${err.message}`);
    console.error(USAGE);
    return 2;
  }
  if (args.help) {
    console.log(USAGE);
    return 0;
  }
  if (args.planOnly) {
    const plan = buildPlan(args);
    console.log(describePlan(plan));
    console.log(describeSchedule(plan));
    return 0;
  }
  const report = await runChaos(args, (line) => console.log(line));
  console.log(renderTable(report));
  if (args.report) {
    writeFileSync(args.report, JSON.stringify(report, null, 2) + '\n');
    console.log(`report written to ${args.report}`);
  }
  if (!report.passed) {
    console.log(`FAILED: ${report.violations.length} violations (seed ${report.seed}; replay: ${report.replay})`);
    console.log(renderViolations(report));
    console.log(`keys involved: ${report.violationKeys.join(' ') || '(none: global checks)'}`);
    if (report.dataDir) console.log(`stack data and logs kept in ${report.dataDir}`);
    return 1;
  }
  console.log(`PASSED: no violations (seed ${report.seed}, schedule hash ${report.scheduleHash.slice(0, 16)})`);
  if (report.dataDir) console.log(`stack data and logs kept in ${report.dataDir}`);
  return 0;
}

run().then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
