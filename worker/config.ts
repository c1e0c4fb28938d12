// Worker configuration, parsed once from the environment. The completion webhooks' URLs and
// signing secret are parsed by hand (common/webhooks.ts) so no message ever echoes them.
import { z } from 'zod';
import { ConfigError, duration, httpUrl, logLevel, parseEnv } from '../common/env.js';
import { collectProblems, parseWebhookSecret, parseWebhookUrls } from '../common/webhooks.js';

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

/** Timeout of one webhook POST: a receiver that takes longer is retried like one that is down. */
export const WEBHOOK_TIMEOUT_MS = 10_000;

export interface WorkerWebhooks {
  /** Each tenant's receiving URL; empty when no tenant has a webhook. */
  urls: Map<string, string>;
  /** The signing secret; set whenever `urls` is not empty. */
  secret: string | undefined;
}

export function loadWorkerConfig(env: Record<string, string | undefined> = process.env) {
  let parsed: z.infer<z.ZodObject<typeof workerEnvSchema>> | undefined;
  let urls = new Map<string, string>();
  let secret: string | undefined;
  const problems = collectProblems([
    () => void (parsed = parseEnv(workerEnvSchema, env)),
    () => void (urls = parseWebhookUrls(env.RETRYSAFE_WEBHOOKS)),
    () => void (secret = parseWebhookSecret(env.RETRYSAFE_WEBHOOK_SECRET)),
  ]);
  if (urls.size > 0 && secret === undefined && !problems.some((p) => p.startsWith('RETRYSAFE_WEBHOOK_SECRET'))) {
    problems.push('RETRYSAFE_WEBHOOK_SECRET is required when RETRYSAFE_WEBHOOKS is set (it signs every event)');
  }
  if (problems.length > 0 || parsed === undefined) throw new ConfigError(problems);
  const webhooks: WorkerWebhooks = { urls, secret };
  return { ...(parsed as z.infer<z.ZodObject<typeof workerEnvSchema>>), webhooks };
}
