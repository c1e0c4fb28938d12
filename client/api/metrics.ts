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

function counter<L extends string = never>(registry: Registry, name: string, help: string, labelNames: L[] = []): Counter<L> {
  return getOrCreate(registry, name, () => new Counter({ name, help, labelNames, registers: [registry] }));
}

function gauge(registry: Registry, name: string, help: string): Gauge {
  return getOrCreate(registry, name, () => new Gauge({ name, help, registers: [registry] }));
}

/** What happens to the operations this instance starts and answers. */
function operationMetrics(registry: Registry) {
  return {
    operationsStarted: counter(registry, 'retrysafe_operations_started_total', 'Operations this API started (claims won)', [
      'type',
    ]),
    replays: counter(
      registry,
      'retrysafe_replays_total',
      'Requests answered from an existing operation (retries, concurrent duplicates)',
      ['type'],
    ),
    fingerprintConflicts: counter(
      registry,
      'retrysafe_fingerprint_conflicts_total',
      'Keys reused with a different request (422)',
    ),
    waitsTimedOut: counter(
      registry,
      'retrysafe_waits_timed_out_total',
      'POSTs that waited for the outcome (Prefer: wait above 0) and answered 202 because the operation was still running',
    ),
    cacheHits: counter(registry, 'retrysafe_cache_hits_total', 'Terminal operations answered from the in-memory cache'),
    cancellations: counter(
      registry,
      'retrysafe_cancellations_total',
      'Cancel requests by result: requested, repeated (already requested), already_completed (409), not_found (404)',
      ['result'],
    ),
  };
}

/** What admission decides: its refusals, the in-flight limit and the tenants' shares of it, the rate windows' store. */
function admissionMetrics(registry: Registry, tenantShares: { read?: () => ReadonlyMap<string, number> }) {
  return {
    admissionRefused: counter(
      registry,
      'retrysafe_admission_refused_total',
      'Requests refused before their body was read, by reason: rate_limited (429, new operations), engine_busy (503, the tenant at its share of the in-flight limit), waiters (429, too many duplicates waiting on one key), reads_limited (429, reads, lists and cancels)',
      ['reason'],
    ),
    operationsInFlight: gauge(
      registry,
      'retrysafe_operations_in_flight',
      'New operations this instance is starting or waiting on (bounded by retrysafe_in_flight_limit)',
    ),
    inFlightLimit: gauge(
      registry,
      'retrysafe_in_flight_limit',
      "This instance's adaptive limit on new operations in flight (between RETRYSAFE_IN_FLIGHT_FLOOR and RETRYSAFE_IN_FLIGHT_CEILING)",
    ),
    engineLatencyRatio: gauge(
      registry,
      'retrysafe_engine_latency_ratio',
      'The latest latency of new operations over their unloaded latency, as the in-flight limit saw it (it aims at RETRYSAFE_LATENCY_TARGET)',
    ),
    tenantShare: getOrCreate(
      registry,
      'retrysafe_tenant_share',
      () =>
        new Gauge({
          name: 'retrysafe_tenant_share',
          help: "Each tenant's max-min fair share of the in-flight limit if it asked now (an idle tenant's share is lent to the busy ones until it asks)",
          labelNames: ['tenant'],
          registers: [registry],
          collect() {
            const shares = tenantShares.read?.();
            if (!shares) return;
            this.reset();
            for (const [tenant, share] of shares) this.set({ tenant }, Math.round(share * 100) / 100);
          },
        }),
    ),
    rateWindowsShared: gauge(
      registry,
      'retrysafe_rate_windows_shared',
      "1 while the tenants' rate windows are counted in the shared store; 0 while it cannot answer and this instance counts them on its own",
    ),
  };
}

/** The instance itself: its mode and its HTTP answers' durations. */
function instanceMetrics(registry: Registry) {
  return {
    devMode: gauge(
      registry,
      'retrysafe_api_dev_mode',
      '1 when this API runs in dev mode (RETRYSAFE_API_KEYS unset: no authentication, one tenant), else 0',
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
          registers: [registry],
        }),
    ),
  };
}

export function createMetrics(registry: Registry = new Registry()): ApiMetrics {
  const tenantShares = shareSources.get(registry) ?? {};
  shareSources.set(registry, tenantShares);
  return {
    tenantShares,
    registry,
    ...operationMetrics(registry),
    ...admissionMetrics(registry, tenantShares),
    ...instanceMetrics(registry),
  };
}
