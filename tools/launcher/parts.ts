// The Node parts of `npm start`, in start order, as the launcher hands them to the
// supervisor. Each entry carries everything the launcher needs about its part (entry point,
// environment, ports, config check, readiness, banner rows), so adding one is one more
// entry in stackParts. Temporal comes first, from temporal.ts.
import { hostname } from 'node:os';
import type { Connection } from '@temporalio/client';
import proto from '@temporalio/proto';
import { ConfigError } from '../../common/env.js';
import type { PortClaim } from '../supervisor/ports.js';
import type { PartSpec } from '../supervisor/part.js';
import { stripAnsi, type ReadyContext } from '../supervisor/ready.js';
import { TEMPORAL_CONNECTION_VARS } from '../../common/temporal.js';
import { loadApiConfig } from '../../client/api/config.js';
import { loadBankConfig } from '../../downstream/bank/config.js';
import { loadReservationsConfig } from '../../downstream/reservations/config.js';
import { loadWorkerConfig } from '../../worker/config.js';
import { loadTracingSettings } from '../../common/tracing/config.js';
import { PART_ENTRY, partEnv, temporalEnv, type StackDescription } from '../stack-env.js';
import type { LauncherConfig } from './options.js';

const { TaskQueueType } = proto.temporal.api.enums.v1;

export interface StackSpec {
  config: LauncherConfig;
  faults: boolean;
  /** Children see TTY-friendly logs when a person is watching. */
  prettyLogs: boolean;
  /** Where the API and worker find Temporal. */
  temporal: StackTemporalInfo;
  /** Opens a connection to that Temporal (the worker's probe looks for its poller). */
  connect?: () => Promise<Connection>;
  /** With --traces: where every part sends its spans (the Zipkin server's span endpoint) and its UI. */
  traces?: { spans: string; ui: string };
}

export interface StackTemporalInfo {
  address: string;
  namespace: string;
  uiUrl: string | undefined;
  /** The launcher runs the dev server. */
  embedded: boolean;
  /** The launcher runs the multi-process cluster: what the banner says about it. */
  cluster?: { postgres: string; processes: string[]; logDir: string; limitsUrl?: string };
}

export interface ServiceSettings {
  /** How many API keys are configured; 0 means dev mode. */
  apiKeyCount: number;
  tenants: string[];
}

/** A part of the stack: what the supervisor runs, plus what the launcher checks and prints. */
export interface StackPart extends Pick<PartSpec, 'name' | 'ready'> {
  /** Entry point relative to the repository root. */
  entry: string;
  /** Variables set for this child on top of the launcher's environment. */
  env: Record<string, string>;
  /** Variables removed from the inherited environment. */
  unsetEnv?: string[];
  /** The ports it will listen on, checked before anything starts. */
  ports: PortClaim[];
  /** The child's own config loader, run on the environment it will get; throws ConfigError. */
  validate(env: Record<string, string | undefined>): void;
  /** Its rows in the banner. */
  banner: { label: string; value: string; note?: string }[];
  /** The files it keeps in the data dir. */
  dataFiles?: string[];
}

/** The environment a child gets: the launcher's, plus its own variables, minus unsetEnv. */
function childEnv(part: StackPart): Record<string, string | undefined> {
  const env: Record<string, string | undefined> = { ...process.env, ...part.env };
  for (const name of part.unsetEnv ?? []) delete env[name];
  return env;
}

/** Display form of a listening host: a browser-friendly name for loopback and wildcard. */
function displayHost(host: string): string {
  if (['127.0.0.1', '0.0.0.0', '::', '::1', 'localhost'].includes(host)) return 'localhost';
  return host.includes(':') ? `[${host}]` : host;
}

/** Where the launcher and the other children reach a part: loopback for a wildcard bind. */
function reachHost(host: string): string {
  if (['0.0.0.0', '::', 'localhost'].includes(host)) return '127.0.0.1';
  return host.includes(':') ? `[${host}]` : host;
}

/** The first API instance's URL (the one the README's curl uses). */
export function apiUrl(config: LauncherConfig): string {
  return apiUrls(config)[0]!;
}

/** Every API instance's URL, in order: api.port, api.port + 1... */
export function apiUrls(config: LauncherConfig): string[] {
  return Array.from({ length: config.instances }, (_, i) => `http://${displayHost(config.api.host)}:${config.api.port + i}`);
}

/** `worker` and `api` for one instance; `worker-1`, `worker-2`... for several. */
function instanceName(role: string, i: number, count: number): string {
  return count === 1 ? role : `${role}-${i + 1}`;
}

/** What every part's entry is made from: the stack, its description for stack-env, the variables all parts share. */
interface PartsContext {
  stack: StackSpec;
  described: StackDescription;
  /** Every part gets the Temporal variables, the sandboxes included. */
  common: Record<string, string>;
  unsetEnv: string[];
  /** RETRYSAFE_OPERATIONS for the API and the worker, when there are folders of operations. */
  outside: Record<string, string>;
}

export function stackParts(stack: StackSpec, settings?: { apiKeys?: (s: ServiceSettings) => void }): StackPart[] {
  const { config } = stack;
  const described: StackDescription = {
    temporal: { address: stack.temporal.address, namespace: stack.temporal.namespace },
    taskQueue: config.taskQueue,
    bank: { host: config.bank.host, port: config.bank.port, db: `${config.dataDir}/bank.db`, url: bankUrl(config) },
    reservations: { host: '127.0.0.1', port: config.reservationsPort, db: `${config.dataDir}/reservations.db` },
    faults: stack.faults,
    ...(process.env.RETRYSAFE_SERVICES !== undefined ? { services: process.env.RETRYSAFE_SERVICES } : {}),
  };
  const ctx: PartsContext = {
    stack,
    described,
    common: {
      ...temporalEnv(described),
      ...(stack.prettyLogs && process.env.LOG_PRETTY === undefined ? { LOG_PRETTY: '1' } : {}),
      // --traces: every part exports to the Zipkin server the launcher runs.
      ...(stack.traces ? { OTEL_TRACES_EXPORTER: 'zipkin', OTEL_EXPORTER_ZIPKIN_ENDPOINT: stack.traces.spans } : {}),
    },
    // With a Temporal of our own, cluster credentials meant for elsewhere must not leak in.
    unsetEnv: stack.temporal.embedded || stack.temporal.cluster ? TEMPORAL_CONNECTION_VARS : [],
    // The API routes and validates the outside operations, the worker runs them: both load the same folders.
    outside: config.operations.length > 0 ? { RETRYSAFE_OPERATIONS: config.operations.map((f) => f.dir).join(',') } : {},
  };
  const each = <T>(make: (i: number) => T): T[] => Array.from({ length: config.instances }, (_, i) => make(i));
  return [...sandboxParts(ctx), ...each((i) => workerPart(ctx, i)), ...each((i) => apiPart(ctx, i, settings))];
}

function bankUrl(config: LauncherConfig): string {
  return `http://${reachHost(config.bank.host)}:${config.bank.port}`;
}

/** The sandbox bank and reservation service. */
function sandboxParts({ stack, described, common, unsetEnv }: PartsContext): StackPart[] {
  const { config } = stack;
  const faultsNote = stack.faults ? 'fault injection on: PUT /_faults' : undefined;
  return [
    {
      name: 'bank',
      entry: PART_ENTRY.bank,
      env: { ...common, ...partEnv(described, 'bank') },
      unsetEnv,
      ports: [{ part: 'bank', what: 'sandbox bank HTTP', host: config.bank.host, port: config.bank.port, variable: 'BANK_PORT' }],
      validate: (env) => void loadBankConfig(env),
      banner: [{ label: 'Sandbox bank', value: `http://${displayHost(config.bank.host)}:${config.bank.port}`, note: faultsNote }],
      dataFiles: ['bank.db'],
      ready: (ctx) => ctx.http(`${bankUrl(config)}/healthz`),
    },
    {
      name: 'reservations',
      entry: PART_ENTRY.reservations,
      env: { ...common, ...partEnv(described, 'reservations') },
      unsetEnv,
      ports: [
        {
          part: 'reservations',
          what: 'sandbox reservations HTTP',
          host: '127.0.0.1',
          port: config.reservationsPort,
          variable: 'RESERVATIONS_PORT',
        },
      ],
      validate: (env) => void loadReservationsConfig(env),
      banner: [{ label: 'Sandbox reservations', value: `http://localhost:${config.reservationsPort}`, note: faultsNote }],
      dataFiles: ['reservations.db'],
      ready: (ctx) => ctx.http(`http://127.0.0.1:${config.reservationsPort}/healthz`),
    },
  ];
}

/** Worker `i` of the stack's instances, its metrics on workerMetricsPort + i. */
function workerPart({ stack, described, common, unsetEnv, outside }: PartsContext, i: number): StackPart {
  const { config } = stack;
  const n = config.instances;
  const name = instanceName('worker', i, n);
  const metricsPort = config.workerMetricsPort + i;
  const metricsUrl = `http://127.0.0.1:${metricsPort}/metrics`;
  return {
    name,
    entry: PART_ENTRY.worker,
    env: {
      ...common,
      ...partEnv({ ...described, worker: { metricsAddress: `127.0.0.1:${metricsPort}` } }, 'worker', outside),
    },
    unsetEnv,
    ports: [
      {
        part: name,
        what: 'worker metrics',
        host: '127.0.0.1',
        port: metricsPort,
        variable: i === 0 ? 'WORKER_METRICS_PORT' : `WORKER_METRICS_PORT (+${i})`,
      },
    ],
    validate: (env) => void loadWorkerConfig(env),
    banner: [{ label: n === 1 ? 'Worker metrics' : `Worker ${i + 1} metrics`, value: metricsUrl }],
    ready: async (ctx) => {
      // "worker ready" is logged once the worker is built; its poller on the task queue
      // proves the same even when LOG_LEVEL hides info lines.
      await Promise.race([ctx.line('its "worker ready" log line', isWorkerReadyLine), pollerProbe(stack, ctx)]);
      await ctx.http(metricsUrl);
    },
  };
}

/** API instance `i` of the stack's instances, on api.port + i. */
function apiPart(
  { stack, described, common, unsetEnv, outside }: PartsContext,
  i: number,
  settings: { apiKeys?: (s: ServiceSettings) => void } | undefined,
): StackPart {
  const { config } = stack;
  const name = instanceName('api', i, config.instances);
  const port = config.api.port + i;
  // Every instance counts tenants' rates in one store (used only when RETRYSAFE_TENANT_LIMITS
  // is set): the cluster's PostgreSQL, else one file; unless the environment names one.
  const limits =
    process.env.RETRYSAFE_LIMITS_DB || process.env.RETRYSAFE_LIMITS_URL
      ? {}
      : stack.temporal.cluster?.limitsUrl
        ? { limitsUrl: stack.temporal.cluster.limitsUrl }
        : { limitsDb: `${config.dataDir}/limits.db` };
  return {
    name,
    entry: PART_ENTRY.api,
    env: {
      ...common,
      ...partEnv({ ...described, api: { host: config.api.host, port, ...limits } }, 'api', {
        ...outside,
        ...(stack.temporal.uiUrl ? { TEMPORAL_UI_URL: stack.temporal.uiUrl } : {}),
      }),
    },
    unsetEnv,
    ports: [{ part: name, what: 'API HTTP', host: config.api.host, port, variable: i === 0 ? 'API_PORT' : `API_PORT (+${i})` }],
    validate: (env) => {
      const keys = loadApiConfig(env).apiKeys ?? [];
      settings?.apiKeys?.({ apiKeyCount: keys.length, tenants: [...new Set(keys.map((k) => k.tenant))] });
    },
    // The APIs' own rows (URLs, docs, keys, the curl) lead the banner: see banner.ts.
    banner: [],
    ready: (ctx) => ctx.http(`http://${reachHost(config.api.host)}:${port}/readyz`),
  };
}

/** `{"msg":"worker ready",...}`, or its pino-pretty form `[12:00:00.000] INFO (worker): worker ready`. */
export function isWorkerReadyLine(line: string): boolean {
  const plain = stripAnsi(line).trim();
  if (plain.startsWith('{')) {
    try {
      return (JSON.parse(plain) as { msg?: unknown }).msg === 'worker ready';
    } catch {
      return false;
    }
  }
  return /^\[[^\]]+\]\s+INFO\s+\(worker\):\s+worker ready$/.test(plain);
}

/** Resolves once this child polls the task queue; one connection for the whole wait. */
async function pollerProbe(stack: StackSpec, ctx: ReadyContext): Promise<void> {
  if (!stack.connect) return new Promise<void>(() => undefined);
  let connection: Connection | undefined;
  try {
    await ctx.poll(
      'its poller on the task queue',
      async () => {
        try {
          connection ??= await stack.connect!();
          // The SDK's default identity is <pid>@<hostname>: this matches our child, not
          // another worker that happens to poll the same queue.
          const identity = `${ctx.pid}@${hostname()}`;
          const res = await connection.workflowService.describeTaskQueue({
            namespace: stack.temporal.namespace,
            taskQueue: { name: stack.config.taskQueue },
            taskQueueType: TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW,
          });
          return (res.pollers ?? []).some((p) => p.identity === identity);
        } catch {
          return false;
        }
      },
      500,
    );
  } finally {
    await connection?.close().catch(() => undefined);
  }
  // The wait ended without a poller (the line came first, or the start failed): never resolve.
  if (ctx.signal.aborted) return new Promise<void>(() => undefined);
}

/**
 * Runs each child's own config loader on the environment it will get, so a bad value is
 * reported before anything starts; throws one ConfigError naming every problem.
 */
export function validateParts(stack: StackSpec): ServiceSettings {
  let result: ServiceSettings = { apiKeyCount: 0, tenants: [] };
  const problems: string[] = [];
  const parts = stackParts(stack, { apiKeys: (s) => (result = s) });
  for (const part of parts) {
    try {
      part.validate(childEnv(part));
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err;
      problems.push(...err.problems.map((p) => `${p} (${part.name})`));
    }
  }
  // The OpenTelemetry variables, the same for every part: checked once.
  try {
    if (parts[0]) loadTracingSettings(parts[0].name, childEnv(parts[0]));
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    problems.push(...err.problems);
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return result;
}
