// `npm run demo -- [options]`: a lost response retried safely, told step by step against
// the stack of `npm start -- --faults` (tools/demo/run.ts). Parse, run, exit with its code.
import { EXIT } from '../../client/cli/exit-codes.js';
import { runDemoCli } from './program.js';

process.exitCode = await runDemoCli(process.argv.slice(2)).catch((err: unknown) => {
  console.error(err);
  return EXIT.error;
});
