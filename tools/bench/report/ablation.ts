// Section 9: what each setting of the embedded server's tuning buys, one fresh engine per
// row, every row beside the first (every setting on).
import { ALL_ON } from '../scenarios/ablation.js';
import type { Section } from './context.js';
import { ms, n1, n2, table } from './format.js';

const NUMBERS = ['zero', 'one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine'];

/** A change of this share or more is called worse or better. */
const NOTABLE = 0.15;

/** " (×1.17 worse)": the row's value ÷ the first row's, named when it moved by NOTABLE or more. */
function delta(v: number, b: number | undefined, lowerIsBetter: boolean): string {
  if (b === undefined || !Number.isFinite(v) || !Number.isFinite(b) || b === 0) return '';
  const x = v / b;
  return ` (×${n2(x)}${Math.abs(x - 1) >= NOTABLE ? ((lowerIsBetter ? x > 1 : x < 1) ? ' worse' : ' better') : ''})`;
}

export const ablation: Section = ({ r }) => {
  const a = r.ablation;
  if (!a) return [];
  // Runs that did not name the operation measured the checkout, three steps.
  const op = a.operation ?? 'checkout';
  const steps = a.steps ?? 3;
  const out = ["## 9. Ablation of the embedded server's tuning", ''];
  out.push(
    `Each row a fresh engine (dev server on a new SQLite file, API, both workers) on this run's sandboxes, with the run's ` +
      "own engine and the peers stopped: every setting, none (the dev server's own defaults), then each one switched off " +
      `in turn. Per row: ${a.counts.opsC1} ${op}s and ${a.counts.opsC1} bare ${NUMBERS[steps] ?? steps}-step workflows ` +
      `(${r.activityKind?.used ?? 'regular'} activities) at c=1, ${a.counts.opsC32} of each at c=32, after ${a.counts.warmupOps} ` +
      `of each to warm up; ops/s by Little's law as above. Settings from ${a.tuningSource}.`,
  );
  out.push('');
  const base = a.rows.find((x) => x.name === ALL_ON);
  out.push(
    table(
      ['server', `${op} c=1 p50 ms`, `${op} c=32 ops/s`, 'bare c=1 p50 ms', 'bare c=32 ops/s', 'n (c=1 / c=32)', 'errors'],
      a.rows.map((row) => [
        row.name,
        `${ms(row.checkout.c1P50Ms)}${delta(row.checkout.c1P50Ms, base?.checkout.c1P50Ms, true)}`,
        `${n1(row.checkout.c32OpsPerSec)}${delta(row.checkout.c32OpsPerSec, base?.checkout.c32OpsPerSec, false)}`,
        `${ms(row.bare.c1P50Ms)}${delta(row.bare.c1P50Ms, base?.bare.c1P50Ms, true)}`,
        `${n1(row.bare.c32OpsPerSec)}${delta(row.bare.c32OpsPerSec, base?.bare.c32OpsPerSec, false)}`,
        `${row.checkout.n.c1}+${row.bare.n.c1} / ${row.checkout.n.c32}+${row.bare.n.c32}`,
        row.checkout.errors + row.bare.errors,
      ]),
    ),
  );
  out.push('');
  if (a.skipped.length) {
    out.push(
      `**Ablation time budget ran out** (${(a.counts.budgetMs / 60_000).toFixed(0)} min): left out ${a.skipped.join('; ')}.`,
    );
    out.push('');
  }
  if (a.settings.length) {
    out.push(
      table(
        ['setting', 'arguments', 'why'],
        a.settings.map((t) => [t.name, `\`${t.args.join(' ')}\``, t.why]),
      ),
    );
    out.push('');
  }
  out.push('(×: the row ÷ the first row; "worse"/"better" when it moved by 15 % or more.)');
  out.push('');
  return out;
};
