// /readyz is open to anyone who reaches the port, and each answer would otherwise be one call
// to Temporal: a probe storm (or a flood aimed at it) would become engine load. The answer is
// kept for a moment, and callers arriving while a check runs share it: at most one engine
// call per interval, however often the route is asked.

/** `check` answered at most once per `intervalMs`; concurrent callers share one call. */
export function cachedReadiness(
  check: () => Promise<boolean>,
  intervalMs: number,
  now: () => number = () => performance.now(),
): () => Promise<boolean> {
  let last: { at: number; ready: boolean } | undefined;
  let running: Promise<boolean> | undefined;
  return () => {
    if (last && now() - last.at < intervalMs) return Promise.resolve(last.ready);
    running ??= check()
      .then((ready) => {
        last = { at: now(), ready };
        return ready;
      })
      .finally(() => {
        running = undefined;
      });
    return running;
  };
}
