// RETRYSAFE_TENANT_LIMITS: how many new operations each tenant may start, as a rate per
// fixed window. Parsed by hand, like the other list-valued variables, so that each bad
// entry gets its own line naming the entry and what is wrong with it.
//
//   RETRYSAFE_TENANT_LIMITS = entry *( "," entry )
//   entry  = tenant "=" limit          tenant = a tenant name, or "*" for every tenant not named
//   limit  = count "/" unit | "unlimited"
//   count  = a whole number, 1 to 1000000          unit = "s" | "m" | "h"
//
// There is no separate burst: a window's whole quota may be spent at once, so "/s" is a
// smooth limit and "/m" or "/h" a bursty one.
import { ConfigError } from '../../../common/env.js';
import { TENANT_PATTERN } from '../../../workflows/identity.js';

export const VARIABLE = 'RETRYSAFE_TENANT_LIMITS';
export const DEFAULT_TENANT_ENTRY = '*';
export const MAX_QUOTA = 1_000_000;
const UNITS = { s: 1, m: 60, h: 3600 } as const;
const UNIT_NAMES: Record<number, string> = { 1: 'second', 60: 'minute', 3600: 'hour' };

/** A quota of new operations per fixed window. */
export interface Rate {
  quota: number;
  windowSeconds: number;
  /** As configured (`50/s`): for messages. */
  spec: string;
}

export interface TenantLimits {
  /** Each named tenant's rate; null names a tenant that is not limited. */
  tenants: ReadonlyMap<string, Rate | null>;
  /** The rate of every tenant not named (`*`); null when they are not limited. */
  others: Rate | null;
}

/** The rate that applies to `tenant`, or null when it is not limited. */
export function rateFor(limits: TenantLimits, tenant: string): Rate | null {
  const named = limits.tenants.get(tenant);
  return named !== undefined ? named : limits.others;
}

/** `50 new operations per second`; `what` names the counted requests in the plural. */
export function describeRate(rate: Rate, what: [string, string] = ['new operation', 'new operations']): string {
  return `${rate.quota} ${rate.quota === 1 ? what[0] : what[1]} per ${UNIT_NAMES[rate.windowSeconds] ?? `${rate.windowSeconds} s`}`;
}

/** Whether any tenant is limited at all (else no store is needed). */
export function limitsAnyone(limits: TenantLimits): boolean {
  return limits.others !== null || [...limits.tenants.values()].some((rate) => rate !== null);
}

function parseLimit(text: string): Rate | null | string {
  if (text === 'unlimited') return null;
  const slash = text.indexOf('/');
  if (slash < 0) return `the limit ${JSON.stringify(text)} has no unit (expected <count>/s, <count>/m, <count>/h or unlimited)`;
  const count = text.slice(0, slash).trim();
  const unit = text.slice(slash + 1).trim();
  if (!/^\d+$/.test(count)) {
    return `the count ${JSON.stringify(count)} must be a whole number from 1 to ${MAX_QUOTA}`;
  }
  const quota = Number(count);
  if (quota < 1 || quota > MAX_QUOTA) return `the count ${count} must be from 1 to ${MAX_QUOTA}`;
  if (!Object.hasOwn(UNITS, unit)) {
    return `the unit ${JSON.stringify(unit)} is not one of s, m, h (per second, minute, hour)`;
  }
  return { quota, windowSeconds: UNITS[unit as keyof typeof UNITS], spec: `${quota}/${unit}` };
}

/**
 * Parses the variable; unset or empty means no tenant is limited (or `others`, when given:
 * the rate of the tenants not named unless the variable names `*`). `knownTenants` are the
 * tenants the API keys name: a limit for any other tenant could never apply, so it is
 * refused as the typo it most likely is (undefined: not known, not checked). `variable`
 * names the variable in messages (the read limits share the grammar).
 */
export function parseTenantLimits(
  raw: string | undefined,
  knownTenants: ReadonlySet<string> | undefined,
  variable: string = VARIABLE,
  defaultOthers: Rate | null = null,
): TenantLimits {
  const tenants = new Map<string, Rate | null>();
  let others: Rate | null = defaultOthers;
  if (raw === undefined || raw.trim() === '') return { tenants, others };
  const problems: string[] = [];
  const seen = new Map<string, number>();
  raw.split(',').forEach((part, i) => {
    const n = i + 1;
    const where = `${variable} entry ${n}`;
    const entry = part.trim();
    if (entry === '') {
      problems.push(`${where} is empty (expected <tenant>=<count>/<unit>, entries separated by commas)`);
      return;
    }
    const eq = entry.indexOf('=');
    if (eq < 0) {
      problems.push(`${where} has no "=" (expected <tenant>=<count>/<unit>, for example acme=50/s or *=20/s)`);
      return;
    }
    const tenant = entry.slice(0, eq).trim();
    const limit = parseLimit(entry.slice(eq + 1).trim());
    let ok = true;
    if (tenant !== DEFAULT_TENANT_ENTRY && !TENANT_PATTERN.test(tenant)) {
      problems.push(
        `${where}: tenant ${JSON.stringify(tenant)} must be "*" or 1-64 characters of letters, digits, "_", "." or "-"`,
      );
      ok = false;
    } else if (tenant !== DEFAULT_TENANT_ENTRY && knownTenants && !knownTenants.has(tenant)) {
      problems.push(`${where}: no API key maps to tenant ${tenant} (tenants: ${[...knownTenants].sort().join(', ')})`);
      ok = false;
    }
    if (typeof limit === 'string') {
      problems.push(`${where}: ${limit}`);
      ok = false;
    }
    if (!ok || typeof limit === 'string') return;
    const previous = seen.get(tenant);
    if (previous !== undefined) {
      problems.push(`${where} repeats ${tenant === DEFAULT_TENANT_ENTRY ? '"*"' : `tenant ${tenant}`} of entry ${previous}`);
      return;
    }
    seen.set(tenant, n);
    if (tenant === DEFAULT_TENANT_ENTRY) others = limit;
    else tenants.set(tenant, limit);
  });
  if (problems.length > 0) throw new ConfigError(problems);
  return { tenants, others };
}
