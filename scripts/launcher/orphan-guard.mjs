// Preloaded into every child of the launcher (`node --import tsx --import <this> ...`):
// if the launcher dies without stopping it (SIGKILL, a crash past its exit hook), the
// child is re-parented and then stops itself with SIGTERM, through its own graceful
// shutdown. Plain JavaScript: it also loads in threads (the Temporal worker's workflow
// thread inherits execArgv), where it does nothing.
import { isMainThread } from 'node:worker_threads';

if (isMainThread) {
  const launcher = process.ppid;
  setInterval(() => {
    if (process.ppid !== launcher) process.kill(process.pid, 'SIGTERM');
  }, 1_000).unref();
}
