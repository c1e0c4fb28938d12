// Housekeeping a sandbox does on its own, even when no request arrives (purging expired
// keys, expiring due holds): run once now, then every `intervalMs`. The timer is unref()ed
// so it never keeps a process alive, and a failed run (a busy database, a closed one at
// shutdown) is reported and retried on the next tick.
export function runPeriodically(task: () => void, intervalMs: number, onError: (err: unknown) => void): () => void {
  const run = () => {
    try {
      task();
    } catch (err) {
      onError(err);
    }
  };
  run();
  const timer = setInterval(run, Math.max(1, Math.trunc(intervalMs)));
  timer.unref();
  return () => clearInterval(timer);
}
