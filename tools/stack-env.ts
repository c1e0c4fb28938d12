// The stack's four Node parts (entry point each) and the environment each one gets, built
// from one typed description of the stack. The launcher, the bench, the chaos run, the
// cluster trial and the test fixtures all describe their stack here instead of spelling
// the variables, so a renamed variable is renamed once. Only what the description holds is
// set: a caller that leaves a field out leaves that variable to the inherited environment
// (or the part's default), and a caller's own extras (short deadlines, log levels, API
// keys) are merged on top by the caller.

/** The parts in start order: the sandboxes, then the worker that calls them, then the API. */
export const STACK_PARTS = ['bank', 'reservations', 'worker', 'api'] as const;
export type StackPartName = (typeof STACK_PARTS)[number];

/** Entry point of each part, relative to the repository root (the TypeScript sources). */
export const PART_ENTRY: Readonly<Record<StackPartName, string>> = {
  bank: 'downstream/bank/server.ts',
  reservations: 'downstream/reservations/server.ts',
  worker: 'worker/main.ts',
  api: 'client/api/server.ts',
};

/** The same entry point in the compiled layout (`npm run build` writes dist/). */
export function compiledEntry(source: string): string {
  return `dist/${source.replace(/\.ts$/, '.js')}`;
}

/** One sandbox: where it listens and keeps its data, and where the worker reaches it. */
export interface SandboxPlace {
  host?: string;
  /** 0 lets it pick a free port (it logs the one it got). */
  port?: number;
  db?: string;
  /** Where the worker reaches it; by default loopback on `port`. */
  url?: string;
}

export interface StackDescription {
  /** Where the API and the worker find Temporal. */
  temporal?: { address: string; namespace?: string };
  taskQueue?: string;
  bank?: SandboxPlace;
  reservations?: SandboxPlace;
  /**
   * Other services declared calls name (an outside folder's): a RETRYSAFE_SERVICES value as
   * the user wrote it. Its entries come first and win over the sandboxes' (a malformed one is
   * left to the worker's own check, which names it).
   */
  services?: string;
  /** The sandboxes' fault-injection endpoints (`PUT /_faults`). */
  faults?: boolean;
  worker?: {
    /** host:port of its metrics endpoint, or `off`. */
    metricsAddress?: string;
    /** One downstream call's timeout, as the worker parses it (`2s`, `5000`). */
    downstreamTimeout?: string;
  };
  api?: {
    host?: string;
    port?: number;
    /** The tenants' rate counters, shared by the API instances of one stack: a SQLite file... */
    limitsDb?: string;
    /** ...or a PostgreSQL database (postgres://…), shared across hosts. */
    limitsUrl?: string;
  };
}

type Env = Record<string, string>;

/** Sets `name` only when the description holds a value for it. */
function some(name: string, value: string | number | undefined): Env {
  return value === undefined ? {} : { [name]: String(value) };
}

/** TEMPORAL_ADDRESS and TEMPORAL_NAMESPACE, as the description says. */
export function temporalEnv(stack: StackDescription): Env {
  return { ...some('TEMPORAL_ADDRESS', stack.temporal?.address), ...some('TEMPORAL_NAMESPACE', stack.temporal?.namespace) };
}

/** A part listening on loopback, as the others reach it. */
export function loopbackUrl(port: number): string {
  return `http://127.0.0.1:${port}`;
}

/** Where the worker reaches a sandbox: its own URL, or loopback on its port. */
export function sandboxUrl(place: SandboxPlace | undefined): string | undefined {
  if (place?.url !== undefined) return place.url;
  return place?.port === undefined ? undefined : loopbackUrl(place.port);
}

/**
 * RETRYSAFE_SERVICES: where the worker (and anything else that calls them) reaches the
 * sandboxes and the other services; a service left out keeps the worker's default.
 */
export function downstreamEnv(stack: StackDescription): Env {
  const given = stack.services?.trim() ? stack.services.split(',').map((e) => e.trim()) : [];
  const named = new Set(given.map((e) => e.split('=')[0]!.trim()));
  const sandboxes = Object.entries({ bank: sandboxUrl(stack.bank), reservations: sandboxUrl(stack.reservations) })
    .filter((e): e is [string, string] => e[1] !== undefined && !named.has(e[0]))
    .map(([name, url]) => `${name}=${url}`);
  const entries = [...given, ...sandboxes];
  return entries.length === 0 ? {} : { RETRYSAFE_SERVICES: entries.join(',') };
}

function sandboxEnv(prefix: string, stack: StackDescription, place: SandboxPlace | undefined): Env {
  return {
    ...some(`${prefix}_HOST`, place?.host),
    ...some(`${prefix}_PORT`, place?.port),
    ...some(`${prefix}_DB`, place?.db),
    ...(stack.faults ? { SANDBOX_FAULTS: '1' } : {}),
  };
}

const BUILDERS: Record<StackPartName, (stack: StackDescription) => Env> = {
  bank: (stack) => sandboxEnv('BANK', stack, stack.bank),
  reservations: (stack) => sandboxEnv('RESERVATIONS', stack, stack.reservations),
  worker: (stack) => ({
    ...temporalEnv(stack),
    ...some('RETRYSAFE_TASK_QUEUE', stack.taskQueue),
    ...downstreamEnv(stack),
    ...some('WORKER_METRICS_ADDRESS', stack.worker?.metricsAddress),
    ...some('DOWNSTREAM_TIMEOUT', stack.worker?.downstreamTimeout),
  }),
  api: (stack) => ({
    ...temporalEnv(stack),
    ...some('API_HOST', stack.api?.host),
    ...some('API_PORT', stack.api?.port),
    ...some('RETRYSAFE_TASK_QUEUE', stack.taskQueue),
    ...some('RETRYSAFE_LIMITS_DB', stack.api?.limitsDb),
    ...some('RETRYSAFE_LIMITS_URL', stack.api?.limitsUrl),
  }),
};

/** The variables `part` gets from this description, with the caller's `extra` on top. */
export function partEnv(stack: StackDescription, part: StackPartName, extra: Env = {}): Env {
  return { ...BUILDERS[part](stack), ...extra };
}
