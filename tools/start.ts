// `npm start`: the whole retrysafe stack on one machine — Temporal dev server, sandbox
// bank, worker, API — started in order, each waited for, then one banner with every URL.
// `--operations <folder>` adds operations defined outside the repository's source;
// `--traces` runs a Zipkin server first and sends every part's traces to it.
// Ctrl-C stops everything in reverse order. `npm run cluster` (--cluster) runs the same
// on a multi-process Temporal cluster on PostgreSQL, with two workers and two APIs. See
// tools/launcher/ for the parts.
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ConfigError } from '../common/env.js';
import { DataDirError } from './launcher/data-dir.js';
import { checkOutsideOperations } from './launcher/definition-folders.js';
import { loadLauncherConfig, parseFlags, UsageError, USAGE } from './launcher/options.js';
import { Output } from './launcher/output.js';
import { runStack } from './launcher/stack.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');

async function main(): Promise<number> {
  const startedAt = performance.now();
  const output = new Output();
  let flags;
  let config;
  try {
    flags = parseFlags(process.argv.slice(2));
    if (flags.help) {
      console.log(USAGE);
      return 0;
    }
    config = loadLauncherConfig(ROOT, process.env, {
      cluster: flags.cluster,
      traces: flags.traces,
      operations: flags.operations,
    });
    const outside = await checkOutsideOperations(config.operations, process.env);
    return await runStack({ config, output, reset: flags.reset, faults: flags.faults, startedAt, outside });
  } catch (err) {
    if (err instanceof UsageError) {
      output.fatal(err.message);
      console.error(USAGE);
      return 2;
    }
    if (err instanceof ConfigError) {
      output.fatal(`${err.message}\nNothing was started.`);
      return 2;
    }
    if (err instanceof DataDirError) {
      output.fatal(err.message);
      return 1;
    }
    throw err;
  }
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
