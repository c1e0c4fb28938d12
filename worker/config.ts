// Worker configuration, parsed once from the environment. The completion webhooks' URLs and
// each tenant's signing secrets are parsed by hand (common/webhooks.ts) so no message ever
// echoes them; the services' base URLs too (RETRYSAFE_SERVICES), for the same reason.
import { z } from 'zod';
import { ConfigError, duration, logLevel, parseEnv } from '../common/env.js';
import {
  collectProblems,
  parseWebhookSecrets,
  parseWebhookUrls,
  refuseOldWebhookSecret,
  SECRETS_VARIABLE,
} from '../common/webhooks.js';

export const workerEnvSchema = {
  RETRYSAFE_TASK_QUEUE: z
    .string()
    .regex(/^[\x21-\x7e]{1,200}$/, 'must be 1-200 visible ASCII characters')
    .default('retrysafe'),
  /** Timeout of one HTTP call to a downstream service (below the activities' start-to-close). */
  DOWNSTREAM_TIMEOUT: duration({ min: 100, max: 60_000 }).default(5_000),
  /** host:port of the Prometheus endpoint for the worker's runtime metrics; `off` disables it. */
  WORKER_METRICS_ADDRESS: z
    .string()
    .regex(/^(off|[\w.-]+:\d{1,5}|\[[0-9a-fA-F:]+\]:\d{1,5})$/, 'must be host:port (e.g. 127.0.0.1:9464) or off')
    .default('127.0.0.1:9464'),
  LOG_LEVEL: logLevel.default('info'),
  /**
   * Set, the worker is one version of this Worker Deployment: the operations it starts stay
   * pinned to its build (Temporal keeps `.` and `:` to join a name to a build ID, and `__`).
   */
  RETRYSAFE_DEPLOYMENT_NAME: z
    .string()
    .regex(/^[A-Za-z0-9][\w-]{0,99}$/, "must be 1-100 letters, digits, '_' or '-', starting with a letter or digit")
    .optional(),
  /** The version's build ID; by default the content hash of the workflow bundle (worker/bundle.ts). */
  RETRYSAFE_BUILD_ID: z
    .string()
    .regex(/^(?!__)[\w.+-]{1,100}$/, "must be 1-100 letters, digits, '_', '.', '+' or '-', not starting with '__'")
    .optional(),
};

/** A versioned worker's deployment, from its variables; none for an unversioned worker. */
export interface WorkerVersioning {
  deploymentName: string;
  /** Unset: the workflow bundle's content hash, known once the operations are loaded. */
  buildId: string | undefined;
}

function versioningOf(parsed: z.infer<z.ZodObject<typeof workerEnvSchema>>, problems: string[]): WorkerVersioning | undefined {
  const { RETRYSAFE_DEPLOYMENT_NAME: deploymentName, RETRYSAFE_BUILD_ID: buildId } = parsed;
  if (deploymentName !== undefined) return { deploymentName, buildId };
  if (buildId !== undefined)
    problems.push(
      'RETRYSAFE_BUILD_ID is set without RETRYSAFE_DEPLOYMENT_NAME: a build ID names a version of a deployment (set both, or neither for an unversioned worker)',
    );
  return undefined;
}

/**
 * Where services are reached unless RETRYSAFE_SERVICES names them: the sandboxes on
 * loopback, as `npm start` runs them. An entry of RETRYSAFE_SERVICES replaces its service's
 * default and adds any other; nothing else in the worker knows a service by name.
 */
export const DEFAULT_SERVICES = 'bank=http://127.0.0.1:4001,reservations=http://127.0.0.1:4002';
const SERVICE_NAME = /^[a-z][a-z0-9_-]{0,39}$/;

/**
 * `<service>=<base URL>,...`: where each service a declared call names is reached. A
 * problem names the entry and the service, never the URL (it may carry a token).
 */
export function parseServiceUrls(raw: string | undefined): Map<string, string> {
  const urls = new Map<string, string>();
  if (raw === undefined || raw.trim() === '') return urls;
  const problems: string[] = [];
  for (const [i, entry] of raw.split(',').entries()) {
    const where = `RETRYSAFE_SERVICES entry ${i + 1}`;
    const eq = entry.indexOf('=');
    const name = (eq < 0 ? entry : entry.slice(0, eq)).trim();
    const url = eq < 0 ? '' : entry.slice(eq + 1).trim();
    if (eq < 0 || name === '' || url === '') problems.push(`${where} must be <service>=<base URL>`);
    else if (!SERVICE_NAME.test(name)) problems.push(`${where}: service name "${name}" must match [a-z][a-z0-9_-]{0,39}`);
    else if (urls.has(name)) problems.push(`${where}: service ${name} is named twice`);
    else if (!/^https?:\/\/[^\s]+$/.test(url) || !URL.canParse(url))
      problems.push(`${where} (service ${name}) must be an http:// or https:// URL`);
    else urls.set(name, url.replace(/\/+$/, ''));
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return urls;
}

/** The worker's services: the defaults, with RETRYSAFE_SERVICES's entries over them. */
export function serviceUrls(raw: string | undefined): Map<string, string> {
  return new Map([...parseServiceUrls(DEFAULT_SERVICES), ...parseServiceUrls(raw)]);
}

/** Variables earlier releases read: set, they would now be silently ignored. */
const REPLACED = {
  BANK_URL: 'RETRYSAFE_SERVICES=bank=<base URL>',
  RESERVATIONS_URL: 'RETRYSAFE_SERVICES=reservations=<base URL>',
} as const;

function replacedVariables(env: Record<string, string | undefined>): string[] {
  return Object.entries(REPLACED)
    .filter(([name]) => env[name] !== undefined)
    .map(([name, instead]) => `${name} is no longer read: set ${instead} instead`);
}

/** Timeout of one webhook POST: a receiver that takes longer is retried like one that is down. */
export const WEBHOOK_TIMEOUT_MS = 10_000;

export interface WorkerWebhooks {
  /** Each tenant's receiving URL; empty when no tenant has a webhook. */
  urls: ReadonlyMap<string, string>;
  /** Each tenant's signing secrets (several while it rotates); every tenant with a URL has one. */
  secrets: ReadonlyMap<string, readonly string[]>;
}

export function loadWorkerConfig(env: Record<string, string | undefined> = process.env) {
  let parsed: z.infer<z.ZodObject<typeof workerEnvSchema>> | undefined;
  let urls = new Map<string, string>();
  let secrets: Map<string, string[]> | undefined;
  let services = new Map<string, string>();
  const problems = collectProblems([
    () => void (services = serviceUrls(env.RETRYSAFE_SERVICES)),
    () => void (parsed = parseEnv(workerEnvSchema, env)),
    () => void (urls = parseWebhookUrls(env.RETRYSAFE_WEBHOOKS)),
    () => void (secrets = parseWebhookSecrets(env[SECRETS_VARIABLE])),
    () => refuseOldWebhookSecret(env),
  ]);
  // Read only once the secrets were: a bad entry is reported as it is, not also as missing.
  if (secrets) {
    const unsigned = [...urls.keys()].filter((tenant) => !secrets!.has(tenant));
    if (unsigned.length > 0) {
      problems.push(
        `${SECRETS_VARIABLE} has no signing secret for tenant${unsigned.length === 1 ? '' : 's'} ${unsigned.join(', ')}, ` +
          'which RETRYSAFE_WEBHOOKS gives a URL (each tenant with a webhook needs its own secret)',
      );
    }
  }
  // Read only once the variables parsed: a malformed name is reported as it is, not also as missing.
  const versioning = parsed ? versioningOf(parsed, problems) : undefined;
  problems.push(...replacedVariables(env));
  if (problems.length > 0 || parsed === undefined) throw new ConfigError(problems);
  const webhooks: WorkerWebhooks = { urls, secrets: secrets ?? new Map() };
  return { ...(parsed as z.infer<z.ZodObject<typeof workerEnvSchema>>), webhooks, services, versioning };
}
