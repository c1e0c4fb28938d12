// The Temporal SDK's logger (for the workflow bundler and Runtime.install) as the tools and
// the tests want it: the SDK's info and debug chatter dropped, warnings and errors (or errors
// alone) on the console. The product's worker logs through pino instead (worker/main.ts).
import type { Logger } from '@temporalio/common';

/** A logger that prints only what `keep` names and worse: 'warn' (the default) or 'error'. */
export function quietLogger(keep: 'warn' | 'error' = 'warn'): Logger {
  const noop = () => undefined;
  return {
    log: noop,
    trace: noop,
    debug: noop,
    info: noop,
    warn: keep === 'warn' ? (message: string) => console.warn(message) : noop,
    error: (message: string) => console.error(message),
  };
}
