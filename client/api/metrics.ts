// Prometheus metrics of the API. Labels are bounded sets (operation type, route pattern,
// method, status, and the tenant where a figure is per tenant: tenants are the configured
// API keys' ones, a bounded set): an idempotency key never becomes a label.
import { Counter, Gauge, Histogram, Registry } from 'prom-client';

export interface ApiMetrics {
  registry: Registry;
  operationsStarted: Counter<'type'>;
  replays: Counter<'type'>;
  fingerprintConflicts: Counter;
  waitsTimedOut: Counter;
  cacheHits: Counter;
  cancellations: Counter<'result'>;
  admissionRefused: Counter<'reason'>;
  operationsInFlight: Gauge;
  devMode: Gauge;
  inFlightLimit: Gauge;
  engineLatencyRatio: Gauge;
  tenantShare: Gauge<'tenant'>;
  /** What tenantShare reports at each scrape: set by the admission plugin. */
  tenantShares: { read?: () => ReadonlyMap<string, number> };
  rateWindowsShared: Gauge;
  httpDuration: Histogram<'route' | 'method' | 'status'>;
}

/** Where each registry's tenant shares come from (the gauge is computed when scraped). */
const shareSources = new WeakMap<Registry, { read?: () => ReadonlyMap<string, number> }>();

/** Reuses a metric already in the registry (several apps may share one in tests). */
function getOrCreate<T>(registry: Registry, name: string, make: () => T): T {
  return (registry.getSingleMetric(name) as T | undefined) ?? make();
}

export function createMetrics(registry: Registry = new Registry()): ApiMetrics {
  const registers = [registry];
  const tenantShares = shareSources.get(registry) ?? {};
  shareSources.set(registry, tenantShares);
  return {
    tenantShares,
    registry,
    operationsStarted: getOrCreate(
      registry,
      'retrysafe_operations_started_total',
      () =>
        new Counter({
          name: 'retrysafe_operations_started_total',
          help: 'Operations this API started (claims won)',
          labelNames: ['type'],
          registers,
        }),
    ),
    replays: getOrCreate(
      registry,
      'retrysafe_replays_total',
      () =>
        new Counter({
          name: 'retrysafe_replays_total',
          help: 'Requests answered from an existing operation (retries, concurrent duplicates)',
          labelNames: ['type'],
          registers,
        }),
    ),
    fingerprintConflicts: getOrCreate(
      registry,
      'retrysafe_fingerprint_conflicts_total',
      () =>
        new Counter({
          name: 'retrysafe_fingerprint_conflicts_total',
          help: 'Keys reused with a different request (422)',
          registers,
        }),
    ),
    waitsTimedOut: getOrCreate(
      registry,
      'retrysafe_waits_timed_out_total',
      () =>
        new Counter({
          name: 'retrysafe_waits_timed_out_total',
          help: 'POSTs that waited for the outcome (Prefer: wait above 0) and answered 202 because the operation was still running',
          registers,
        }),
    ),
    cacheHits: getOrCreate(
      registry,
      'retrysafe_cache_hits_total',
      () =>
        new Counter({
          name: 'retrysafe_cache_hits_total',
          help: 'Terminal operations answered from the in-memory cache',
          registers,
        }),
    ),
    cancellations: getOrCreate(
      registry,
      'retrysafe_cancellations_total',
      () =>
        new Counter({
          name: 'retrysafe_cancellations_total',
          help: 'Cancel requests by result: requested, repeated (already requested), already_completed (409), not_found (404)',
          labelNames: ['result'],
          registers,
        }),
    ),
    admissionRefused: getOrCreate(
      registry,
      'retrysafe_admission_refused_total',
      () =>
        new Counter({
          name: 'retrysafe_admission_refused_total',
          help: 'Requests refused before their body was read, by reason: rate_limited (429, new operations), engine_busy (503, the tenant at its share of the in-flight limit), waiters (429, too many duplicates waiting on one key), reads_limited (429, reads, lists and cancels)',
          labelNames: ['reason'],
          registers,
        }),
    ),
    operationsInFlight: getOrCreate(
      registry,
      'retrysafe_operations_in_flight',
      () =>
        new Gauge({
          name: 'retrysafe_operations_in_flight',
          help: 'New operations this instance is starting or waiting on (bounded by retrysafe_in_flight_limit)',
          registers,
        }),
    ),
    inFlightLimit: getOrCreate(
      registry,
      'retrysafe_in_flight_limit',
      () =>
        new Gauge({
          name: 'retrysafe_in_flight_limit',
          help: "This instance's adaptive limit on new operations in flight (between RETRYSAFE_IN_FLIGHT_FLOOR and RETRYSAFE_IN_FLIGHT_CEILING)",
          registers,
        }),
    ),
    engineLatencyRatio: getOrCreate(
      registry,
      'retrysafe_engine_latency_ratio',
      () =>
        new Gauge({
          name: 'retrysafe_engine_latency_ratio',
          help: 'The latest latency of new operations over their unloaded latency, as the in-flight limit saw it (it aims at RETRYSAFE_LATENCY_TARGET)',
          registers,
        }),
    ),
    tenantShare: getOrCreate(
      registry,
      'retrysafe_tenant_share',
      () =>
        new Gauge({
          name: 'retrysafe_tenant_share',
          help: "Each tenant's max-min fair share of the in-flight limit if it asked now (an idle tenant's share is lent to the busy ones until it asks)",
          labelNames: ['tenant'],
          registers,
          collect() {
            const shares = tenantShares.read?.();
            if (!shares) return;
            this.reset();
            for (const [tenant, share] of shares) this.set({ tenant }, Math.round(share * 100) / 100);
          },
        }),
    ),
    rateWindowsShared: getOrCreate(
      registry,
      'retrysafe_rate_windows_shared',
      () =>
        new Gauge({
          name: 'retrysafe_rate_windows_shared',
          help: "1 while the tenants' rate windows are counted in the shared store; 0 while it cannot answer and this instance counts them on its own",
          registers,
        }),
    ),
    devMode: getOrCreate(
      registry,
      'retrysafe_api_dev_mode',
      () =>
        new Gauge({
          name: 'retrysafe_api_dev_mode',
          help: '1 when this API runs in dev mode (RETRYSAFE_API_KEYS unset: no authentication, one tenant), else 0',
          registers,
        }),
    ),
    httpDuration: getOrCreate(
      registry,
      'retrysafe_http_request_duration_seconds',
      () =>
        new Histogram({
          name: 'retrysafe_http_request_duration_seconds',
          help: 'HTTP request duration by route pattern',
          labelNames: ['route', 'method', 'status'],
          buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
          registers,
        }),
    ),
  };
}
