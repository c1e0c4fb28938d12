// Completion webhook settings, parsed once per process. The API reads which tenants have a
// webhook (their operations get a notification workflow) and the delivery deadline it hands
// each operation; the worker reads the same URLs and the signing secret, which no other
// process ever sees and which never enters a workflow's history. Both variables are parsed
// by hand, like the API keys: parseEnv would echo a bad value, and a URL may carry a token.
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

/**
 * Checks RETRYSAFE_WEBHOOK_SECRET: `whsec_` and the base64 of at least 24 random bytes.
 * Messages say what is wrong with the value and never repeat any of it.
 */
export function parseWebhookSecret(raw: string | undefined): string | undefined {
  if (raw === undefined || raw.trim() === '') return undefined;
  const secret = raw.trim();
  const name = 'RETRYSAFE_WEBHOOK_SECRET';
  const example = `e.g. ${WEBHOOK_SECRET_PREFIX}$(openssl rand -base64 32)`;
  if (!secret.startsWith(WEBHOOK_SECRET_PREFIX)) {
    throw new ConfigError([`${name} must start with "${WEBHOOK_SECRET_PREFIX}" (the Standard Webhooks format, ${example})`]);
  }
  const encoded = secret.slice(WEBHOOK_SECRET_PREFIX.length);
  const bytes = Buffer.from(encoded, 'base64');
  // Strict base64: decoding and encoding again must give the text back.
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(encoded) || bytes.toString('base64').replace(/=+$/, '') !== encoded.replace(/=+$/, '')) {
    throw new ConfigError([`${name}: what follows "${WEBHOOK_SECRET_PREFIX}" must be standard base64 (${example})`]);
  }
  if (bytes.length < MIN_WEBHOOK_SECRET_BYTES) {
    throw new ConfigError([
      `${name} holds ${bytes.length} bytes; at least ${MIN_WEBHOOK_SECRET_BYTES} random bytes are needed (${example})`,
    ]);
  }
  return secret;
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
