// Entry point of the `retrysafe` CLI (`node --import tsx client/cli/main.ts`, or the
// `retrysafe` bin): parse, run, exit with the command's code.
import { runCli } from './program.js';

// `retrysafe list | head` closes the pipe early; that is the reader being done, not a failure.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code === 'EPIPE') process.exit(process.exitCode ?? 0);
  throw error;
});

runCli(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    console.error(err);
    process.exitCode = 4;
  },
);
