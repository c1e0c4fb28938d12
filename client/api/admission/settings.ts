// The admission variables, parsed once at start-up with one line per bad variable:
//
//   RETRYSAFE_TENANT_LIMITS       new operations per tenant per window, shared by every instance
//   RETRYSAFE_TENANT_READ_LIMITS  reads, lists and cancels per tenant, per instance (default *=100/s)
//   RETRYSAFE_LIMITS_URL          postgres://… : the shared windows in PostgreSQL (across hosts)
//   RETRYSAFE_LIMITS_DB           a SQLite file: the shared windows of one host (the default)
//   RETRYSAFE_LIMITS_TIMEOUT      how long a request waits for that store before the fallback
//   RETRYSAFE_IN_FLIGHT_FLOOR     the adaptive in-flight limit never goes under this
//   RETRYSAFE_IN_FLIGHT_CEILING   nor over this (RETRYSAFE_MAX_IN_FLIGHT: its former name)
//   RETRYSAFE_LATENCY_TARGET      the engine latency the limit aims at, × its unloaded latency
//
// The store's URL is parsed by hand: a bad URL's message must not echo its credentials.
import { z } from 'zod';
import { ConfigError, duration, parseEnv, problemCollector } from '../../../common/env.js';
import type { AdaptiveLimitSettings } from './adaptive-limit.js';
import { parseTenantLimits, type Rate, type TenantLimits } from './tenant-limits.js';

export const DEFAULT_LIMITS_DB = '.data/limits.db';
export const DEFAULT_IN_FLIGHT_FLOOR = 2;
export const DEFAULT_IN_FLIGHT_CEILING = 64;
export const DEFAULT_LATENCY_TARGET = 1.5;
const READ_VARIABLE = 'RETRYSAFE_TENANT_READ_LIMITS';
/** Reads per tenant and instance unless RETRYSAFE_TENANT_READ_LIMITS names `*`: bounded by default. */
export const DEFAULT_READ_RATE: Rate = { quota: 100, windowSeconds: 1, spec: '100/s' };
const MAX_IN_FLIGHT = 100_000;

/** Where the tenants' windows are kept. */
export type LimitsStore = { kind: 'sqlite'; path: string } | { kind: 'postgres'; url: string };

export interface AdmissionSettings {
  /** Each tenant's rate of new operations, shared by every instance through `store`. */
  tenantLimits: TenantLimits;
  /** Each tenant's rate of reads, lists and cancels, counted by each instance. */
  readLimits: TenantLimits;
  store: LimitsStore;
  /** How long a request waits for the store before this instance counts on its own. */
  storeTimeoutMs: number;
  /** The adaptive limit on new operations in flight, per instance. */
  inFlight: AdaptiveLimitSettings;
}

const wholeNumber = (min: number, max: number) =>
  z
    .string()
    .trim()
    .regex(/^\d+$/, 'must be a whole number')
    .transform(Number)
    .refine((n) => n >= min && n <= max, `must be between ${min} and ${max}`);

const shape = {
  RETRYSAFE_LIMITS_DB: z.string().trim().min(1).optional(),
  RETRYSAFE_LIMITS_TIMEOUT: duration({ min: 10, max: 10_000 }).default(200),
  RETRYSAFE_IN_FLIGHT_FLOOR: wholeNumber(1, MAX_IN_FLIGHT).default(DEFAULT_IN_FLIGHT_FLOOR),
  RETRYSAFE_IN_FLIGHT_CEILING: wholeNumber(1, MAX_IN_FLIGHT).optional(),
  RETRYSAFE_MAX_IN_FLIGHT: wholeNumber(1, MAX_IN_FLIGHT).optional(),
  RETRYSAFE_LATENCY_TARGET: z
    .string()
    .trim()
    .regex(/^\d+(\.\d+)?$/, 'must be a number such as 1.5 (the latency aimed at, as a multiple of the unloaded latency)')
    .transform(Number)
    .refine((n) => n > 1 && n <= 100, 'must be above 1 and at most 100')
    .default(DEFAULT_LATENCY_TARGET),
};

/** `postgres://user@host:5432/db` without its password, for messages. */
function shownUrl(raw: string): string {
  try {
    const url = new URL(raw);
    url.password = '';
    url.username = '';
    url.search = '';
    return url.toString();
  } catch {
    return '(not a URL)';
  }
}

function parseLimitsUrl(raw: string): string | { problem: string } {
  const where = `RETRYSAFE_LIMITS_URL=${JSON.stringify(shownUrl(raw))}`;
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    return { problem: 'RETRYSAFE_LIMITS_URL is not a URL (expected postgres://user:password@host:5432/database)' };
  }
  if (url.protocol !== 'postgres:' && url.protocol !== 'postgresql:') {
    return { problem: `${where}: must start with postgres:// or postgresql:// (the shared store is PostgreSQL)` };
  }
  if (url.hostname === '') return { problem: `${where}: names no host` };
  if (url.pathname.replace(/^\//, '') === '') return { problem: `${where}: names no database (…/<database> at its end)` };
  return raw.trim();
}

/** Reads the variables of `env`; `knownTenants` are the API keys' tenants (undefined: not checked). */
export function parseAdmissionSettings(
  env: Record<string, string | undefined>,
  knownTenants: ReadonlySet<string> | undefined,
): AdmissionSettings {
  const problems: string[] = [];
  const collect = problemCollector(problems);
  const tenantLimits = collect(() => parseTenantLimits(env.RETRYSAFE_TENANT_LIMITS, knownTenants));
  const reads = collect(() =>
    parseTenantLimits(env.RETRYSAFE_TENANT_READ_LIMITS, knownTenants, READ_VARIABLE, DEFAULT_READ_RATE),
  );
  const parsed = collect(() => parseEnv(shape, env));

  const rawUrl = env.RETRYSAFE_LIMITS_URL;
  let url: string | undefined;
  if (rawUrl !== undefined && rawUrl !== '') {
    const result = parseLimitsUrl(rawUrl);
    if (typeof result === 'string') url = result;
    else problems.push(result.problem);
  }
  const db = env.RETRYSAFE_LIMITS_DB;
  if (rawUrl && db) {
    problems.push(
      "RETRYSAFE_LIMITS_URL and RETRYSAFE_LIMITS_DB are both set: the tenants' windows live in one store; keep RETRYSAFE_LIMITS_URL (PostgreSQL, shared across hosts) or RETRYSAFE_LIMITS_DB (SQLite, one host), not both",
    );
  }
  if (parsed?.RETRYSAFE_MAX_IN_FLIGHT !== undefined && parsed.RETRYSAFE_IN_FLIGHT_CEILING !== undefined) {
    problems.push(
      'RETRYSAFE_MAX_IN_FLIGHT and RETRYSAFE_IN_FLIGHT_CEILING are both set: RETRYSAFE_MAX_IN_FLIGHT is the former name of RETRYSAFE_IN_FLIGHT_CEILING; keep only RETRYSAFE_IN_FLIGHT_CEILING',
    );
  }
  const ceiling = parsed?.RETRYSAFE_IN_FLIGHT_CEILING ?? parsed?.RETRYSAFE_MAX_IN_FLIGHT ?? DEFAULT_IN_FLIGHT_CEILING;
  const ceilingName =
    parsed?.RETRYSAFE_IN_FLIGHT_CEILING === undefined && parsed?.RETRYSAFE_MAX_IN_FLIGHT !== undefined
      ? 'RETRYSAFE_MAX_IN_FLIGHT'
      : 'RETRYSAFE_IN_FLIGHT_CEILING';
  if (parsed && parsed.RETRYSAFE_IN_FLIGHT_FLOOR > ceiling) {
    problems.push(
      `RETRYSAFE_IN_FLIGHT_FLOOR=${parsed.RETRYSAFE_IN_FLIGHT_FLOOR} is above ${ceilingName}=${ceiling}: the floor of the in-flight limit must not exceed its ceiling`,
    );
  }
  if (problems.length > 0 || !parsed || !tenantLimits || !reads) throw new ConfigError(problems);
  return {
    tenantLimits,
    readLimits: reads,
    store: url ? { kind: 'postgres', url } : { kind: 'sqlite', path: parsed.RETRYSAFE_LIMITS_DB ?? DEFAULT_LIMITS_DB },
    storeTimeoutMs: parsed.RETRYSAFE_LIMITS_TIMEOUT,
    inFlight: { floor: parsed.RETRYSAFE_IN_FLIGHT_FLOOR, ceiling, target: parsed.RETRYSAFE_LATENCY_TARGET },
  };
}
