// `retrysafe_operations_stuck`: how many open operations the engine reports as unable to
// make progress (their workflow tasks keep failing), for an alert. Counted by one
// visibility query when Prometheus scrapes, at most once per COUNT_EVERY_MS; a scrape while
// the engine is unreachable keeps the last count rather than failing /metrics.
import { Gauge, type Registry } from 'prom-client';

const COUNT_EVERY_MS = 15_000;

export function registerStuckGauge(registry: Registry, count: () => Promise<number>, now: () => number = Date.now): void {
  if (registry.getSingleMetric('retrysafe_operations_stuck')) return;
  let last: { at: number; value: number } | undefined;
  new Gauge({
    name: 'retrysafe_operations_stuck',
    help: 'Open operations whose workflow tasks keep failing (the engine reports them; each resource says why)',
    registers: [registry],
    async collect() {
      if (last === undefined || now() - last.at >= COUNT_EVERY_MS) {
        const value = await count().catch(() => last?.value);
        if (value !== undefined) last = { at: now(), value };
      }
      if (last !== undefined) this.set(last.value);
    },
  });
}
