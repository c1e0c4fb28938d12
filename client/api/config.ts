// API configuration, parsed once at start-up. RETRYSAFE_API_KEYS is parsed by hand rather
// than through the zod schema because parseEnv echoes a bad variable's value, and this
// one holds secrets: its messages name the entry and the tenant, never the secret. The
// same goes for RETRYSAFE_WEBHOOKS (a URL may carry a token); the API only needs to know
// which tenants have a webhook, never the signing secret.
import { z } from 'zod';
import { ConfigError, duration, httpUrl, logLevel, parseEnv, port } from '../../common/env.js';
import { parseWebhookUrls, webhookDeadline } from '../../common/webhooks.js';
import { TENANT_PATTERN } from '../../workflows/identity.js';
import { parseAdmissionSettings, type AdmissionSettings } from './admission/settings.js';

/** How long a checkout's reservation hold lives unless RETRYSAFE_HOLD_TTL says otherwise. */
export const DEFAULT_HOLD_TTL_SECONDS = 900;
export const DEV_TENANT = 'default';
export { TENANT_PATTERN };
/** Printable ASCII without space, `,` and `=` (the list separators), at least 16 characters. */
const SECRET_PATTERN = /^[\x21-\x2b\x2d-\x3c\x3e-\x7e]+$/;
const MIN_SECRET_LENGTH = 16;

export interface ApiKeyEntry {
  secret: string;
  tenant: string;
}

export interface ApiConfig {
  host: string;
  port: number;
  /** null: dev mode, every request is tenant `default`. */
  apiKeys: ApiKeyEntry[] | null;
  taskQueue: string;
  stepDeadlineMs: number;
  attentionAfterMs: number;
  /** How long a checkout's reservation hold lives before the reservation service expires it. */
  holdTtlSeconds: number;
  defaultWaitMs: number;
  bodyLimit: number;
  cacheSize: number;
  cacheTtlMs: number;
  /** Deadline of each Temporal call the API makes (start, describe, list); not of the wait. */
  engineTimeoutMs: number;
  temporalUiUrl: string;
  logLevel: z.infer<typeof logLevel>;
  /** Completion webhooks: the tenants that have one, and how long each event is redelivered. */
  webhooks: { tenants: ReadonlySet<string>; deadlineMs: number };
  /** What the API takes on before it refuses a request (429, 503 engine_busy). */
  admission: AdmissionSettings;
}

const wholeNumber = (min: number, max: number) =>
  z
    .string()
    .regex(/^\d+$/, 'must be a whole number')
    .transform(Number)
    .refine((n) => n >= min && n <= max, `must be between ${min} and ${max}`);

const shape = {
  API_HOST: z.string().min(1).default('127.0.0.1'),
  API_PORT: port.default(3000),
  RETRYSAFE_TASK_QUEUE: z.string().min(1).max(1000).default('retrysafe'),
  RETRYSAFE_STEP_DEADLINE: duration({ min: 1_000 }).default(60_000),
  RETRYSAFE_ATTENTION_AFTER: duration({ min: 1_000 }).default(300_000),
  RETRYSAFE_HOLD_TTL: duration({ min: 1_000, max: 86_400_000 }).default(DEFAULT_HOLD_TTL_SECONDS * 1000),
  RETRYSAFE_DEFAULT_WAIT: duration({ max: 60_000 }).default(10_000),
  RETRYSAFE_BODY_LIMIT: wholeNumber(1_024, 10 * 1024 * 1024).default(65_536),
  RETRYSAFE_CACHE_SIZE: wholeNumber(0, 10_000_000).default(10_000),
  // Terminal outcomes are immutable, but the key is forgotten after the namespace retention
  // (1 h at the least): a cache entry must never outlive it.
  RETRYSAFE_CACHE_TTL: duration({ min: 1_000, max: 3_600_000 }).default(600_000),
  RETRYSAFE_ENGINE_TIMEOUT: duration({ min: 100, max: 60_000 }).default(5_000),
  TEMPORAL_UI_URL: httpUrl.default('http://localhost:8233'),
  LOG_LEVEL: logLevel.default('info'),
  RETRYSAFE_WEBHOOK_DEADLINE: webhookDeadline,
};

/**
 * Parses `<secret>=<tenant>,...`. Several secrets may name the same tenant (key rotation);
 * the same secret twice is refused, since it could not tell two tenants apart.
 */
export function parseApiKeys(raw: string | undefined): ApiKeyEntry[] | null {
  if (raw === undefined || raw.trim() === '') return null;
  const problems: string[] = [];
  const entries: ApiKeyEntry[] = [];
  const seen = new Map<string, number>();
  raw.split(',').forEach((part, i) => {
    const n = i + 1;
    const entry = part.trim();
    const where = `RETRYSAFE_API_KEYS entry ${n}`;
    if (entry === '') {
      problems.push(`${where} is empty (expected <secret>=<tenant>, entries separated by commas)`);
      return;
    }
    const eq = entry.indexOf('=');
    if (eq < 0) {
      problems.push(`${where} has no "=" (expected <secret>=<tenant>)`);
      return;
    }
    const secret = entry.slice(0, eq).trim();
    const tenant = entry.slice(eq + 1).trim();
    let ok = true;
    if (secret.length < MIN_SECRET_LENGTH) {
      problems.push(`${where}: the secret is shorter than ${MIN_SECRET_LENGTH} characters`);
      ok = false;
    } else if (!SECRET_PATTERN.test(secret)) {
      problems.push(`${where}: the secret may hold only printable ASCII without spaces, "," or "="`);
      ok = false;
    }
    if (!TENANT_PATTERN.test(tenant)) {
      problems.push(`${where}: tenant ${JSON.stringify(tenant)} must be 1-64 characters of letters, digits, "_", "." or "-"`);
      ok = false;
    }
    if (!ok) return;
    const previous = seen.get(secret);
    if (previous !== undefined) {
      problems.push(`${where} repeats the secret of entry ${previous}`);
      return;
    }
    seen.set(secret, n);
    entries.push({ secret, tenant });
  });
  if (problems.length > 0) throw new ConfigError(problems);
  return entries;
}

export function loadApiConfig(env: Record<string, string | undefined> = process.env): ApiConfig {
  const problems: string[] = [];
  let apiKeys: ApiKeyEntry[] | null = null;
  let apiKeysRead = false;
  try {
    apiKeys = parseApiKeys(env.RETRYSAFE_API_KEYS);
    apiKeysRead = true;
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    problems.push(...err.problems);
  }
  let webhookTenants = new Set<string>();
  try {
    webhookTenants = new Set(parseWebhookUrls(env.RETRYSAFE_WEBHOOKS).keys());
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    problems.push(...err.problems);
  }
  let admission: AdmissionSettings | undefined;
  try {
    // Which tenants exist is known only once the API keys were read.
    const known = apiKeysRead ? new Set(apiKeys === null ? [DEV_TENANT] : apiKeys.map((k) => k.tenant)) : undefined;
    admission = parseAdmissionSettings(env, known);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    problems.push(...err.problems);
  }
  let parsed: z.infer<z.ZodObject<typeof shape>> | undefined;
  try {
    parsed = parseEnv(shape, env);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    problems.push(...err.problems);
  }
  if (problems.length > 0 || parsed === undefined || admission === undefined) throw new ConfigError(problems);
  return {
    host: parsed.API_HOST,
    port: parsed.API_PORT,
    apiKeys,
    taskQueue: parsed.RETRYSAFE_TASK_QUEUE,
    stepDeadlineMs: parsed.RETRYSAFE_STEP_DEADLINE,
    attentionAfterMs: parsed.RETRYSAFE_ATTENTION_AFTER,
    holdTtlSeconds: Math.ceil(parsed.RETRYSAFE_HOLD_TTL / 1000),
    defaultWaitMs: parsed.RETRYSAFE_DEFAULT_WAIT,
    bodyLimit: parsed.RETRYSAFE_BODY_LIMIT,
    cacheSize: parsed.RETRYSAFE_CACHE_SIZE,
    cacheTtlMs: parsed.RETRYSAFE_CACHE_TTL,
    engineTimeoutMs: parsed.RETRYSAFE_ENGINE_TIMEOUT,
    temporalUiUrl: parsed.TEMPORAL_UI_URL,
    logLevel: parsed.LOG_LEVEL,
    webhooks: { tenants: webhookTenants, deadlineMs: parsed.RETRYSAFE_WEBHOOK_DEADLINE },
    admission,
  };
}
