// Prometheus metrics of the API. Labels are bounded sets (operation type, route pattern,
// method, status): an idempotency key or tenant never becomes a label.
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
  admissionBypassed: Counter<'reason'>;
  operationsInFlight: Gauge;
  devMode: Gauge;
  httpDuration: Histogram<'route' | 'method' | 'status'>;
}

/** Reuses a metric already in the registry (several apps may share one in tests). */
function getOrCreate<T>(registry: Registry, name: string, make: () => T): T {
  return (registry.getSingleMetric(name) as T | undefined) ?? make();
}

export function createMetrics(registry: Registry = new Registry()): ApiMetrics {
  const registers = [registry];
  return {
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
          help: 'New operations refused before anything started, by reason: rate_limited (429), engine_busy (503)',
          labelNames: ['reason'],
          registers,
        }),
    ),
    admissionBypassed: getOrCreate(
      registry,
      'retrysafe_admission_bypassed_total',
      () =>
        new Counter({
          name: 'retrysafe_admission_bypassed_total',
          help: 'Requests over a limit (reason: rate_limited, engine_busy) served anyway because their key already names an operation',
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
          help: 'New operations this instance is starting or waiting on (bounded by RETRYSAFE_MAX_IN_FLIGHT)',
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
