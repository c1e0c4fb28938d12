// Worker configuration, parsed once from the environment.
import { z } from 'zod';
import { duration, httpUrl, logLevel, parseEnv } from '../common/env.js';

export const workerEnvSchema = {
  RETRYSAFE_TASK_QUEUE: z
    .string()
    .regex(/^[\x21-\x7e]{1,200}$/, 'must be 1-200 visible ASCII characters')
    .default('retrysafe'),
  BANK_URL: httpUrl.default('http://127.0.0.1:4001'),
  RESERVATIONS_URL: httpUrl.default('http://127.0.0.1:4002'),
  /** Timeout of one HTTP call to a downstream service (below the activities' start-to-close). */
  DOWNSTREAM_TIMEOUT: duration({ min: 100, max: 60_000 }).default(5_000),
  /** host:port of the Prometheus endpoint for the worker's runtime metrics; `off` disables it. */
  WORKER_METRICS_ADDRESS: z
    .string()
    .regex(/^(off|[\w.-]+:\d{1,5}|\[[0-9a-fA-F:]+\]:\d{1,5})$/, 'must be host:port (e.g. 127.0.0.1:9464) or off')
    .default('127.0.0.1:9464'),
  LOG_LEVEL: logLevel.default('info'),
};

export function loadWorkerConfig(env: Record<string, string | undefined> = process.env) {
  return parseEnv(workerEnvSchema, env);
}
