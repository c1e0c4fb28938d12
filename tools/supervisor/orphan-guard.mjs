// Preloaded into every Node child of the supervisor (`node --import tsx --import <this> ...`):
// if the process that started it dies without stopping it (SIGKILL, a crash past its exit
// hook), the child is re-parented and then stops itself with SIGTERM, through its own
// graceful shutdown. Plain JavaScript: it also loads in threads (the Temporal worker's
// workflow thread inherits execArgv), where it does nothing.
import { isMainThread } from 'node:worker_threads';

if (isMainThread) {
  const parent = process.ppid;
  setInterval(() => {
    if (process.ppid !== parent) process.kill(process.pid, 'SIGTERM');
  }, 1_000).unref();
}
