// --replay: no stack; each variant's own workflow bundle replays one stored history N
// times per round in this process, the variants interleaved, and the figure is this
// process's CPU per execution.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { bundleWorkflowCode, Runtime, Worker, makeTelemetryFilterString, type BundleOptions } from '@temporalio/worker';
import { quietLogger } from '../../quiet-logger.js';
import { log } from './log.js';
import type { Options } from './options.js';
import { pairedDifference } from './report.js';
import { materialise } from './variants.js';

/** --replay: CPU per replayed execution of one stored history, per variant bundle, in this process. */
export async function replayMain(opts: Options, historyFile: string): Promise<void> {
  Runtime.install({
    logger: quietLogger('error'),
    telemetryOptions: { logging: { filter: makeTelemetryFilterString({ core: 'ERROR' }), forward: {} } },
  });
  const history = JSON.parse(readFileSync(historyFile, 'utf8')) as unknown;
  const bundles: Array<{ name: string; code: string }> = [];
  for (const variant of opts.variants) {
    const root = materialise(variant);
    // That checkout's own bundle options, so the bundle is made as its worker makes it.
    const entry = join(root, variant.compiled ? 'dist/worker/bundle.js' : 'worker/bundle.ts');
    const { WORKFLOW_BUNDLE_OPTIONS } = (await import(entry)) as { WORKFLOW_BUNDLE_OPTIONS: BundleOptions };
    const { code } = await bundleWorkflowCode({ ...WORKFLOW_BUNDLE_OPTIONS, logger: quietLogger('error') });
    bundles.push({ name: variant.name, code });
    log(`variant ${variant.name}: bundled`);
  }
  const perExecution = new Map<string, number[]>(bundles.map((b) => [b.name, []]));
  for (let round = 0; round < opts.rounds; round++) {
    for (const bundle of round % 2 === 0 ? bundles : [...bundles].reverse()) {
      async function* executions() {
        for (let i = 0; i < opts.executions; i++) yield { workflowId: `replay-${round}-${i}`, history };
      }
      const before = process.cpuUsage();
      let failed = 0;
      for await (const result of Worker.runReplayHistories({ workflowBundle: { code: bundle.code } }, executions())) {
        if (result.error) failed++;
      }
      if (failed > 0)
        throw new Error(
          `${bundle.name}: ${failed} of ${opts.executions} replays failed (a bundle that cannot replay this history)`,
        );
      const used = process.cpuUsage(before);
      const ms = (used.user + used.system) / 1000 / opts.executions;
      perExecution.get(bundle.name)!.push(ms);
      log(`round ${round + 1} ${bundle.name}: ${ms.toFixed(2)} ms per execution`);
    }
  }
  const f = (n: number) => (Number.isFinite(n) ? n.toFixed(2) : '—');
  const first = perExecution.get(bundles[0]!.name)!;
  console.log(`## CPU per replayed execution of ${historyFile}\n`);
  console.log(`\`npx tsx tools/bench/cpu-per-op.ts ${process.argv.slice(2).join(' ')}\`\n`);
  console.log(
    `| variant | ms per execution (mean of ${opts.rounds} rounds × ${opts.executions}) | − ${bundles[0]!.name}, paired by round (mean ± 2 SE) |`,
  );
  console.log('|---|---|---|');
  for (const { name } of bundles) {
    const values = perExecution.get(name)!;
    const { mean, twoSe } = pairedDifference(first, values);
    const cell = name === bundles[0]!.name ? '' : `${mean >= 0 ? '+' : ''}${f(mean)} ± ${f(twoSe)}`;
    console.log(`| ${name} | ${f(values.reduce((n, x) => n + x, 0) / values.length)} | ${cell} |`);
  }
}
