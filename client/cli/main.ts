// Entry point of the `retrysafe` CLI (`node --import tsx client/cli/main.ts`, or the
// `retrysafe` bin): parse, run, exit with the command's code.
import { runCli } from './program.js';

runCli(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    console.error(err);
    process.exitCode = 4;
  },
);
