// Completion webhook settings, parsed once per process. The API reads which tenants have a
// webhook (their operations get a notification workflow) and the delivery deadline it hands
// each operation; the worker reads the same URLs and each tenant's signing secrets, which no
// other process ever sees and which never enter a workflow's history. The variables are
// parsed by hand, like the API keys: parseEnv would echo a bad value, and a URL may carry a
// token.
import { ConfigError, duration } from './env.js';
import { TENANT_PATTERN } from '../workflows/identity.js';

export const WEBHOOK_SECRET_PREFIX = 'whsec_';
/** The Standard Webhooks recommendation: at least 24 random bytes (192 bits). */
export const MIN_WEBHOOK_SECRET_BYTES = 24;

/** RETRYSAFE_WEBHOOK_DEADLINE: redeliveries stop this long after the operation ended. */
export const webhookDeadline = duration({ min: 1_000, max: 30 * 86_400_000 }).default(86_400_000);

/** Parses `<tenant>=<url>,...` into the URL of each tenant (one URL per tenant). */
export function parseWebhookUrls(raw: string | undefined): Map<string, string> {
  const urls = new Map<string, string>();
  if (raw === undefined || raw.trim() === '') return urls;
  const problems: string[] = [];
  raw.split(',').forEach((part, i) => {
    const where = `RETRYSAFE_WEBHOOKS entry ${i + 1}`;
    const entry = part.trim();
    const eq = entry.indexOf('=');
    if (entry === '' || eq < 0) {
      problems.push(`${where} is not <tenant>=<url> (entries are separated by commas)`);
      return;
    }
    const tenant = entry.slice(0, eq).trim();
    const url = entry.slice(eq + 1).trim();
    if (!TENANT_PATTERN.test(tenant)) {
      problems.push(`${where}: the tenant must be 1-64 characters of letters, digits, "_", "." or "-"`);
      return;
    }
    let parsed: URL | undefined;
    try {
      parsed = new URL(url);
    } catch {
      parsed = undefined;
    }
    if (!parsed || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')) {
      problems.push(`${where} (tenant ${tenant}): the URL must be an absolute http:// or https:// URL`);
      return;
    }
    if (urls.has(tenant)) {
      problems.push(`${where}: tenant ${tenant} already has a webhook (one URL per tenant)`);
      return;
    }
    urls.set(tenant, parsed.href);
  });
  if (problems.length > 0) throw new ConfigError(problems);
  return urls;
}

/** The variable that held one secret for every tenant; setting it now is an error that names its replacement. */
export const OLD_SECRET_VARIABLE = 'RETRYSAFE_WEBHOOK_SECRET';
export const SECRETS_VARIABLE = 'RETRYSAFE_WEBHOOK_SECRETS';

const SECRET_EXAMPLE = `e.g. ${WEBHOOK_SECRET_PREFIX}$(openssl rand -base64 32)`;

/**
 * What is wrong with one signing secret, or undefined: `whsec_` and the standard base64 of
 * at least 24 bytes. The answer says what is wrong and never repeats any of the value.
 */
export function webhookSecretProblem(secret: string): string | undefined {
  if (!secret.startsWith(WEBHOOK_SECRET_PREFIX)) {
    return `must start with "${WEBHOOK_SECRET_PREFIX}" (the Standard Webhooks format, ${SECRET_EXAMPLE})`;
  }
  const encoded = secret.slice(WEBHOOK_SECRET_PREFIX.length);
  const bytes = Buffer.from(encoded, 'base64');
  // Strict base64: decoding and encoding again must give the text back.
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(encoded) || bytes.toString('base64').replace(/=+$/, '') !== encoded.replace(/=+$/, '')) {
    return `what follows "${WEBHOOK_SECRET_PREFIX}" must be standard base64 (${SECRET_EXAMPLE})`;
  }
  if (bytes.length < MIN_WEBHOOK_SECRET_BYTES) {
    return `holds ${bytes.length} bytes; at least ${MIN_WEBHOOK_SECRET_BYTES} random bytes are needed (${SECRET_EXAMPLE})`;
  }
  return undefined;
}

/**
 * Parses RETRYSAFE_WEBHOOK_SECRETS, `<tenant>=<secret>[ <secret>...],...`: each tenant's
 * signing secrets, several while it rotates (every one signs each event). A tenant holds
 * only its own, so it can verify its events and forge no one else's. Messages name the
 * entry, the tenant and the position of a bad secret, never a secret.
 */
export function parseWebhookSecrets(raw: string | undefined): Map<string, string[]> {
  const secrets = new Map<string, string[]>();
  if (raw === undefined || raw.trim() === '') return secrets;
  const problems: string[] = [];
  raw.split(',').forEach((part, i) => {
    const where = `${SECRETS_VARIABLE} entry ${i + 1}`;
    const entry = part.trim();
    const eq = entry.indexOf('=');
    if (entry === '' || eq < 0) {
      problems.push(`${where} is not <tenant>=<secret>[ <secret>...] (entries are separated by commas)`);
      return;
    }
    const tenant = entry.slice(0, eq).trim();
    const values = entry
      .slice(eq + 1)
      .split(/[ \t]+/)
      .filter((v) => v !== '');
    if (!TENANT_PATTERN.test(tenant)) {
      problems.push(`${where}: the tenant must be 1-64 characters of letters, digits, "_", "." or "-"`);
      return;
    }
    if (secrets.has(tenant)) {
      problems.push(`${where}: tenant ${tenant} is named twice (list all its secrets in one entry, separated by spaces)`);
      return;
    }
    if (values.length === 0) {
      problems.push(`${where} (tenant ${tenant}) has no secret after "="`);
      return;
    }
    let ok = true;
    values.forEach((secret, j) => {
      const problem = webhookSecretProblem(secret);
      if (problem === undefined) return;
      ok = false;
      problems.push(`${where} (tenant ${tenant}), secret ${j + 1}: ${problem}`);
    });
    if (new Set(values).size !== values.length) {
      ok = false;
      problems.push(`${where} (tenant ${tenant}) lists the same secret twice`);
    }
    if (ok) secrets.set(tenant, values);
  });
  // One secret for two tenants would let each forge the other's events: the flaw per-tenant secrets remove.
  const owner = new Map<string, string>();
  for (const [tenant, values] of secrets) {
    for (const secret of values) {
      const other = owner.get(secret);
      if (other !== undefined)
        problems.push(`${SECRETS_VARIABLE}: tenants ${other} and ${tenant} share a secret; each needs its own`);
      owner.set(secret, tenant);
    }
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return secrets;
}

/** The old single secret, set: a configuration error that names its replacement (and never the value). */
export function refuseOldWebhookSecret(env: Record<string, string | undefined>): void {
  if (env[OLD_SECRET_VARIABLE] === undefined || env[OLD_SECRET_VARIABLE].trim() === '') return;
  throw new ConfigError([
    `${OLD_SECRET_VARIABLE} is no longer read: give each tenant its own signing secret with ` +
      `${SECRETS_VARIABLE}="<tenant>=<secret>[ <secret>...],..." (one secret for all let any tenant forge another's events)`,
  ]);
}

/** Runs each parser, collecting every problem into one ConfigError. */
export function collectProblems(parsers: Array<() => void>): string[] {
  const problems: string[] = [];
  for (const parse of parsers) {
    try {
      parse();
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err;
      problems.push(...err.problems);
    }
  }
  return problems;
}
