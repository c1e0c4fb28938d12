// API configuration, parsed once at start-up. RETRYSAFE_API_KEYS is parsed by hand rather
// than through the zod schema because parseEnv echoes a bad variable's value, and this
// one holds secrets: its messages name the entry and the tenant, never the secret. The
// same goes for RETRYSAFE_METRICS_TOKEN and RETRYSAFE_WEBHOOKS (a URL may carry a token);
// the API only needs to know which tenants have a webhook, never their signing secrets.
//
// Authentication fails closed: RETRYSAFE_API_KEYS set but blank (a secret that did not
// mount) or malformed refuses to start; only its absence means dev mode, and dev mode
// listens on a loopback address unless RETRYSAFE_DEV_MODE=on says it is meant.
import { z } from 'zod';
import { ConfigError, duration, httpUrl, logLevel, parseEnv, port, problemCollector } from '../../common/env.js';
import { parseSettingOverrides, type SettingOverride } from '../../common/programs.js';
import { parseWebhookUrls, refuseOldWebhookSecret, webhookDeadline } from '../../common/webhooks.js';
import { TENANT_PATTERN } from '../../workflows/identity.js';
import { parseAdmissionSettings, type AdmissionSettings } from './admission/settings.js';
import { isLoopbackHost } from './loopback.js';

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
  /** Dev mode (no API keys): every request is tenant `default`, without authentication. */
  devMode: boolean;
  /** The bearer a remote scrape of /metrics must send; a loopback one needs none. Undefined: remote scrapes are refused. */
  metricsToken: string | undefined;
  taskQueue: string;
  stepDeadlineMs: number;
  attentionAfterMs: number;
  /** Values of the definitions' settings other than their defaults (RETRYSAFE_SETTINGS). */
  settings: SettingOverride[];
  defaultWaitMs: number;
  bodyLimit: number;
  cacheSize: number;
  /** What the outcome cache may hold, in bytes of its entries' JSON. */
  cacheBytes: number;
  cacheTtlMs: number;
  /** Deadline of each Temporal call the API makes (start, describe, list); not of the wait. */
  engineTimeoutMs: number;
  /**
   * Base of `links.temporalUi` in tenants' resources and webhooks (TEMPORAL_UI_URL); undefined
   * unless RETRYSAFE_UI_LINKS is on, which it is by default in dev mode only: the Web UI shows
   * every tenant's operations, and can act on them.
   */
  temporalUiUrl: string | undefined;
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

/** `64MiB`, `512KiB`, `1GiB` or a whole number of bytes, between `min` and `max`. */
const byteSize = (min: number, max: number) =>
  z.string().transform((raw, ctx) => {
    const m = /^(\d+)\s*(B|KiB|MiB|GiB)?$/.exec(raw.trim());
    const unit = { B: 1, KiB: 1024, MiB: 1024 ** 2, GiB: 1024 ** 3 }[m?.[2] ?? 'B'] ?? 1;
    const value = m ? Number(m[1]) * unit : NaN;
    if (!Number.isSafeInteger(value) || value < min || value > max) {
      ctx.addIssue({
        code: 'custom',
        message: `must be a size from ${min / 1024 ** 2} MiB to ${max / 1024 ** 3} GiB (e.g. 64MiB)`,
      });
      return z.NEVER;
    }
    return value;
  });

/** `on` or `off`; unset keeps the variable's default, which may depend on other settings. */
const onOff = z.enum(['on', 'off'], { message: 'must be on or off' });

const shape = {
  API_HOST: z.string().min(1).default('127.0.0.1'),
  API_PORT: port.default(3000),
  RETRYSAFE_TASK_QUEUE: z.string().min(1).max(1000).default('retrysafe'),
  RETRYSAFE_STEP_DEADLINE: duration({ min: 1_000 }).default(60_000),
  RETRYSAFE_ATTENTION_AFTER: duration({ min: 1_000 }).default(300_000),
  RETRYSAFE_DEFAULT_WAIT: duration({ max: 60_000 }).default(10_000),
  RETRYSAFE_BODY_LIMIT: wholeNumber(1_024, 10 * 1024 * 1024).default(65_536),
  RETRYSAFE_CACHE_SIZE: wholeNumber(0, 10_000_000).default(10_000),
  // Entries are bounded in number and, since a resource's size depends on what a tenant sent
  // and on its definition, in bytes: 10 M entries alone could hold many gigabytes.
  RETRYSAFE_CACHE_BYTES: byteSize(1024 ** 2, 16 * 1024 ** 3).default(64 * 1024 ** 2),
  // Terminal outcomes are immutable, but the key is forgotten after the namespace retention
  // (1 h at the least): a cache entry must never outlive it.
  RETRYSAFE_CACHE_TTL: duration({ min: 1_000, max: 3_600_000 }).default(600_000),
  RETRYSAFE_ENGINE_TIMEOUT: duration({ min: 100, max: 60_000 }).default(5_000),
  TEMPORAL_UI_URL: httpUrl.default('http://localhost:8233'),
  LOG_LEVEL: logLevel.default('info'),
  RETRYSAFE_WEBHOOK_DEADLINE: webhookDeadline,
  RETRYSAFE_DEV_MODE: onOff.optional(),
  RETRYSAFE_UI_LINKS: onOff.optional(),
};

/**
 * RETRYSAFE_METRICS_TOKEN: the bearer of a remote Prometheus scrape. The same rules as an API
 * secret, and none of them (the token would then also be a tenant's key). Blank means unset:
 * remote scrapes are then refused, which fails closed.
 */
export function parseMetricsToken(raw: string | undefined, apiKeys: readonly ApiKeyEntry[] | null): string | undefined {
  if (raw === undefined || raw.trim() === '') return undefined;
  const token = raw.trim();
  const name = 'RETRYSAFE_METRICS_TOKEN';
  if (token.length < MIN_SECRET_LENGTH) throw new ConfigError([`${name} is shorter than ${MIN_SECRET_LENGTH} characters`]);
  if (!/^[\x21-\x7e]+$/.test(token)) throw new ConfigError([`${name} may hold only visible ASCII characters (no spaces)`]);
  if (apiKeys?.some((k) => k.secret === token)) {
    throw new ConfigError([`${name} is also a secret of RETRYSAFE_API_KEYS; the operator's token must be its own`]);
  }
  return token;
}

/**
 * Parses `<secret>=<tenant>,...`. Several secrets may name the same tenant (key rotation);
 * the same secret twice is refused, since it could not tell two tenants apart.
 */
export function parseApiKeys(raw: string | undefined): ApiKeyEntry[] | null {
  if (raw === undefined) return null;
  if (raw.trim() === '') {
    // The usual failure of a secret that did not mount: never taken as "no keys, no auth".
    throw new ConfigError([
      'RETRYSAFE_API_KEYS is set but blank; give it <secret>=<tenant>,... or unset it for dev mode (no authentication)',
    ]);
  }
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
  const collect = problemCollector(problems);
  // undefined: not read (its problems are kept); null: dev mode.
  const apiKeys = collect(() => parseApiKeys(env.RETRYSAFE_API_KEYS));
  const webhookTenants = collect(() => new Set(parseWebhookUrls(env.RETRYSAFE_WEBHOOKS).keys())) ?? new Set<string>();
  // Which tenants exist is known only once the API keys were read.
  const known = apiKeys === undefined ? undefined : new Set(apiKeys === null ? [DEV_TENANT] : apiKeys.map((k) => k.tenant));
  const admission = collect(() => parseAdmissionSettings(env, known));
  const settings = collect(() => parseSettingOverrides(env.RETRYSAFE_SETTINGS)) ?? [];
  const metricsToken = collect(() => {
    const token = parseMetricsToken(env.RETRYSAFE_METRICS_TOKEN, apiKeys ?? null);
    // The API never reads a signing secret; the old shared one set here is a mistake all the same.
    refuseOldWebhookSecret(env);
    return token;
  });
  // Read by earlier releases; silently ignoring it would change every checkout's hold.
  if (env.RETRYSAFE_HOLD_TTL !== undefined) {
    problems.push(
      "RETRYSAFE_HOLD_TTL is no longer read: the hold time is the checkout definition's own setting; " +
        'set RETRYSAFE_SETTINGS=checkout.holdTtlSeconds=<seconds> instead',
    );
  }
  const parsed = collect(() => parseEnv(shape, env));
  if (parsed && apiKeys !== undefined) problems.push(...devModeProblems(apiKeys, parsed.API_HOST, parsed.RETRYSAFE_DEV_MODE));
  if (problems.length > 0 || parsed === undefined || admission === undefined || apiKeys === undefined) {
    throw new ConfigError(problems);
  }
  const devMode = apiKeys === null;
  return {
    host: parsed.API_HOST,
    port: parsed.API_PORT,
    apiKeys,
    devMode,
    metricsToken,
    taskQueue: parsed.RETRYSAFE_TASK_QUEUE,
    stepDeadlineMs: parsed.RETRYSAFE_STEP_DEADLINE,
    attentionAfterMs: parsed.RETRYSAFE_ATTENTION_AFTER,
    settings,
    defaultWaitMs: parsed.RETRYSAFE_DEFAULT_WAIT,
    bodyLimit: parsed.RETRYSAFE_BODY_LIMIT,
    cacheSize: parsed.RETRYSAFE_CACHE_SIZE,
    cacheBytes: parsed.RETRYSAFE_CACHE_BYTES,
    cacheTtlMs: parsed.RETRYSAFE_CACHE_TTL,
    engineTimeoutMs: parsed.RETRYSAFE_ENGINE_TIMEOUT,
    // Tenants never see the operators' console unless the operator says so; in dev mode the
    // one tenant is the operator.
    temporalUiUrl: (parsed.RETRYSAFE_UI_LINKS ?? (devMode ? 'on' : 'off')) === 'on' ? parsed.TEMPORAL_UI_URL : undefined,
    logLevel: parsed.LOG_LEVEL,
    webhooks: { tenants: webhookTenants, deadlineMs: parsed.RETRYSAFE_WEBHOOK_DEADLINE },
    admission,
  };
}

/**
 * Dev mode (no API keys) only where no one else can reach it, unless asked for by name; and
 * never asked for beside API keys, which would contradict it.
 */
function devModeProblems(apiKeys: ApiKeyEntry[] | null, host: string, devMode: 'on' | 'off' | undefined): string[] {
  if (apiKeys !== null) {
    return devMode === 'on' ? ['RETRYSAFE_DEV_MODE=on asks for dev mode (no authentication), but RETRYSAFE_API_KEYS is set'] : [];
  }
  if (isLoopbackHost(host) || devMode === 'on') return [];
  return [
    `RETRYSAFE_API_KEYS is not set, so the API would run in dev mode (no authentication, every request tenant "${DEV_TENANT}") ` +
      `on API_HOST=${host}, which other machines can reach: set RETRYSAFE_API_KEYS, listen on 127.0.0.1, ` +
      'or set RETRYSAFE_DEV_MODE=on if that is what you mean',
  ];
}
