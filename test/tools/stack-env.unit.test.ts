// The stack's description and the environment each part gets from it: pinned for a sample
// stack, and checked against the parts' own config loaders, so a variable the module sets
// is one its part reads, with the value the description meant.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { loadApiConfig } from '../../client/api/config.js';
import { loadTemporalSettings } from '../../common/temporal.js';
import { loadBankConfig } from '../../downstream/bank/config.js';
import { loadReservationsConfig } from '../../downstream/reservations/config.js';
import {
  compiledEntry,
  downstreamEnv,
  PART_ENTRY,
  partEnv,
  STACK_PARTS,
  type StackDescription,
  type StackPartName,
} from '../../tools/stack-env.js';
import { loadWorkerConfig } from '../../worker/config.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

const SAMPLE: StackDescription = {
  temporal: { address: 'temporal.example:7233', namespace: 'payments' },
  taskQueue: 'orders',
  bank: { host: '0.0.0.0', port: 4101, db: '/data/bank.db', url: 'http://bank.internal:4101' },
  reservations: { host: '127.0.0.1', port: 4102, db: '/data/reservations.db' },
  faults: true,
  worker: { metricsAddress: '127.0.0.1:9500', downstreamTimeout: '2s' },
  api: { host: '127.0.0.1', port: 3100, limitsDb: '/data/limits.db' },
};

const EXPECTED: Record<StackPartName, Record<string, string>> = {
  bank: { BANK_HOST: '0.0.0.0', BANK_PORT: '4101', BANK_DB: '/data/bank.db', SANDBOX_FAULTS: '1' },
  reservations: {
    RESERVATIONS_HOST: '127.0.0.1',
    RESERVATIONS_PORT: '4102',
    RESERVATIONS_DB: '/data/reservations.db',
    SANDBOX_FAULTS: '1',
  },
  worker: {
    TEMPORAL_ADDRESS: 'temporal.example:7233',
    TEMPORAL_NAMESPACE: 'payments',
    RETRYSAFE_TASK_QUEUE: 'orders',
    RETRYSAFE_SERVICES: 'bank=http://bank.internal:4101,reservations=http://127.0.0.1:4102',
    WORKER_METRICS_ADDRESS: '127.0.0.1:9500',
    DOWNSTREAM_TIMEOUT: '2s',
  },
  api: {
    TEMPORAL_ADDRESS: 'temporal.example:7233',
    TEMPORAL_NAMESPACE: 'payments',
    API_HOST: '127.0.0.1',
    API_PORT: '3100',
    RETRYSAFE_TASK_QUEUE: 'orders',
    RETRYSAFE_LIMITS_DB: '/data/limits.db',
  },
};

type Env = Record<string, string | undefined>;

/** Each part's config loader, and what it made of the sample's environment. */
const LOADERS: Record<StackPartName, (env: Env) => Record<string, unknown>> = {
  bank: (env) => {
    const c = loadBankConfig(env);
    return { host: c.host, port: c.port, db: c.dbPath, faults: c.faults };
  },
  reservations: (env) => {
    const c = loadReservationsConfig(env);
    return { host: c.host, port: c.port, db: c.dbPath, faults: c.faults };
  },
  worker: (env) => {
    const c = loadWorkerConfig(env);
    return {
      taskQueue: c.RETRYSAFE_TASK_QUEUE,
      bank: c.services.get('bank'),
      reservations: c.services.get('reservations'),
      metrics: c.WORKER_METRICS_ADDRESS,
      timeoutMs: c.DOWNSTREAM_TIMEOUT,
    };
  },
  api: (env) => {
    const c = loadApiConfig(env);
    return { host: c.host, port: c.port, taskQueue: c.taskQueue, limits: c.admission.store };
  },
};

const LOADED: Record<StackPartName, Record<string, unknown>> = {
  bank: { host: '0.0.0.0', port: 4101, db: '/data/bank.db', faults: true },
  reservations: { host: '127.0.0.1', port: 4102, db: '/data/reservations.db', faults: true },
  worker: {
    taskQueue: 'orders',
    bank: 'http://bank.internal:4101',
    reservations: 'http://127.0.0.1:4102',
    metrics: '127.0.0.1:9500',
    timeoutMs: 2_000,
  },
  api: { host: '127.0.0.1', port: 3100, taskQueue: 'orders', limits: { kind: 'sqlite', path: '/data/limits.db' } },
};

/** The variables `load` looks up when it parses `env`. */
function variablesReadBy(load: (env: Env) => unknown, env: Record<string, string>): Set<string> {
  const read = new Set<string>();
  const watched = new Proxy(env, {
    get(target, name, receiver) {
      if (typeof name === 'string') read.add(name);
      return Reflect.get(target, name, receiver) as unknown;
    },
  });
  load(watched);
  return read;
}

describe('the environment of each part of the stack', () => {
  it.each(STACK_PARTS)('%s: exactly the variables of the sample stack', (part) => {
    expect(partEnv(SAMPLE, part)).toEqual(EXPECTED[part]);
  });

  it.each(STACK_PARTS)('%s: its own config loader accepts it and reads every variable set', (part) => {
    const env = partEnv(SAMPLE, part);
    expect(LOADERS[part](env)).toEqual(LOADED[part]);
    // Temporal's variables are read by the connection settings the API and the worker share.
    const temporal = part === 'api' || part === 'worker' ? ['TEMPORAL_ADDRESS', 'TEMPORAL_NAMESPACE'] : [];
    if (temporal.length > 0)
      expect(loadTemporalSettings(env)).toMatchObject({ address: 'temporal.example:7233', namespace: 'payments' });
    const read = variablesReadBy(LOADERS[part], env);
    expect(Object.keys(env).filter((name) => !read.has(name) && !temporal.includes(name))).toEqual([]);
  });

  it.each(STACK_PARTS)('%s: nothing set that the description leaves out', (part) => {
    expect(partEnv({}, part)).toEqual({});
  });

  it('sets SANDBOX_FAULTS only when faults are on', () => {
    const off = { ...SAMPLE, faults: false };
    expect(partEnv(off, 'bank')).not.toHaveProperty('SANDBOX_FAULTS');
    expect(loadBankConfig(partEnv(off, 'bank')).faults).toBe(false);
    expect(loadReservationsConfig(partEnv(off, 'reservations')).faults).toBe(false);
  });

  it('reaches a sandbox on loopback at its port unless given its URL, and other services where they are', () => {
    expect(downstreamEnv({ bank: { port: 0 }, reservations: { url: 'http://127.0.0.1:9' } })).toEqual({
      RETRYSAFE_SERVICES: 'bank=http://127.0.0.1:0,reservations=http://127.0.0.1:9',
    });
    expect(downstreamEnv({ bank: { port: 4001 }, services: 'shipping=http://127.0.0.1:4003' })).toEqual({
      RETRYSAFE_SERVICES: 'shipping=http://127.0.0.1:4003,bank=http://127.0.0.1:4001',
    });
    // A service the caller names itself is not named twice.
    expect(downstreamEnv({ bank: { port: 4001 }, services: 'bank=http://bank.internal' })).toEqual({
      RETRYSAFE_SERVICES: 'bank=http://bank.internal',
    });
  });

  it("puts the caller's extras on top of what the description sets", () => {
    expect(partEnv(SAMPLE, 'worker', { DOWNSTREAM_TIMEOUT: '5s', LOG_LEVEL: 'warn' })).toMatchObject({
      DOWNSTREAM_TIMEOUT: '5s',
      LOG_LEVEL: 'warn',
      RETRYSAFE_TASK_QUEUE: 'orders',
    });
  });
});

describe('the entry point of each part', () => {
  it.each(STACK_PARTS)('%s: its source file exists, and its compiled one is the same path under dist/', (part) => {
    expect(existsSync(join(ROOT, PART_ENTRY[part])), PART_ENTRY[part]).toBe(true);
    expect(compiledEntry(PART_ENTRY[part])).toBe(`dist/${PART_ENTRY[part].slice(0, -'.ts'.length)}.js`);
  });
});
