// The launcher's decisions that need no processes: flags, configuration, the dev server's
// command line, the readiness line of the worker, port-conflict detection and the banner.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { prettyFactory } from 'pino-pretty';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEV_SERVER_TUNING, devServerArgs } from '../../tools/dev-server.js';
import { ConfigError } from '../../common/env.js';
import { renderBanner } from '../../tools/launcher/banner.js';
import { loadLauncherConfig, parseFlags, UsageError } from '../../tools/launcher/options.js';
import { Output } from '../../tools/launcher/output.js';
import { addressInUse, freePort } from '../../tools/supervisor/ports.js';
import { answers, checkOutsideOperations } from '../../tools/launcher/operations.js';
import { isWorkerReadyLine, stackParts, validateParts } from '../../tools/launcher/parts.js';

const ROOT = '/repo';

function configError(fn: () => unknown): string[] {
  try {
    fn();
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  throw new Error('expected a ConfigError');
}

describe('flags', () => {
  it('accepts --reset, --faults, --cluster and --help', () => {
    expect(parseFlags(['--reset', '--faults'])).toEqual({
      reset: true,
      faults: true,
      cluster: false,
      help: false,
      operations: [],
    });
    expect(parseFlags(['--cluster']).cluster).toBe(true);
    expect(parseFlags(['-h']).help).toBe(true);
  });

  it('takes --operations <folder>, as often as given', () => {
    expect(parseFlags(['--operations', 'examples/shipping']).operations).toEqual(['examples/shipping']);
    expect(parseFlags(['--operations=a', '--reset', '--operations', 'b,c']).operations).toEqual(['a', 'b,c']);
  });

  it('refuses --operations without a folder', () => {
    expect(() => parseFlags(['--operations'])).toThrow(new UsageError("Option '--operations <value>' argument missing"));
    expect(() => parseFlags(['--operations', '--reset'])).toThrow(UsageError);
  });

  it('refuses unknown options, positionals and values on switches in one line', () => {
    expect(() => parseFlags(['--rest'])).toThrow(new UsageError("unknown option '--rest'"));
    expect(() => parseFlags(['now'])).toThrow(new UsageError("unexpected argument 'now'"));
    expect(() => parseFlags(['--reset=yes'])).toThrow(UsageError);
  });
});

describe('configuration', () => {
  it('defaults to the embedded dev server, .data at the repo root and a 7-day retention', () => {
    const c = loadLauncherConfig(ROOT, {});
    expect(c.temporal).toEqual({ mode: 'embedded', host: '127.0.0.1', port: 7233, uiPort: 8233, namespace: 'default' });
    expect(c.dataDir).toBe('/repo/.data');
    expect(c.retentionMs).toBe(7 * 24 * 3_600_000);
    expect([c.bank.port, c.workerMetricsPort, c.api.port]).toEqual([4001, 9464, 3000]);
  });

  it('uses the cluster named by TEMPORAL_ADDRESS instead of a dev server', () => {
    const c = loadLauncherConfig(ROOT, { TEMPORAL_ADDRESS: 'temporal.example:7233', TEMPORAL_NAMESPACE: 'payments' });
    expect(c.temporal).toMatchObject({ mode: 'external', address: 'temporal.example:7233', namespace: 'payments' });
  });

  it('with --cluster, runs its own cluster on TEMPORAL_PORT with two workers and two APIs, in .data/cluster', () => {
    const c = loadLauncherConfig(ROOT, { API_PORT: '3100' }, { cluster: true });
    expect(c.temporal).toEqual({ mode: 'cluster', host: '127.0.0.1', port: 7233, uiPort: 8233, namespace: 'default' });
    expect(c.dataDir).toBe('/repo/.data/cluster');
    expect(c.instances).toBe(2);
    const parts = stackParts({ config: c, faults: false, prettyLogs: false, temporal: clusterInfo });
    expect(parts.map((p) => p.name)).toEqual(['bank', 'reservations', 'worker-1', 'worker-2', 'api-1', 'api-2']);
    expect(parts.flatMap((p) => p.ports.map((claim) => `${claim.part}:${claim.port}`))).toEqual([
      'bank:4001',
      'reservations:4002',
      'worker-1:9464',
      'worker-2:9465',
      'api-1:3100',
      'api-2:3101',
    ]);
    // Pointed at a cluster of our own: credentials meant for another cluster stay out.
    expect(parts.every((p) => p.unsetEnv?.includes('TEMPORAL_API_KEY'))).toBe(true);
    // Both APIs count tenants' rates in one file in the data dir.
    const apis = parts.filter((p) => p.name.startsWith('api-'));
    expect(apis.map((p) => p.env.RETRYSAFE_LIMITS_DB)).toEqual([
      '/repo/.data/cluster/limits.db',
      '/repo/.data/cluster/limits.db',
    ]);
  });

  it("with --cluster, refuses TEMPORAL_ADDRESS and a port inside the cluster's block", () => {
    expect(configError(() => loadLauncherConfig(ROOT, { TEMPORAL_ADDRESS: 'elsewhere:7233' }, { cluster: true }))[0]).toMatch(
      /^TEMPORAL_ADDRESS=elsewhere:7233: --cluster starts a cluster of its own/,
    );
    expect(configError(() => loadLauncherConfig(ROOT, { API_PORT: '7254' }, { cluster: true }))).toEqual([
      "API_PORT=7254 is inside the cluster's ports 7233-7254 (from TEMPORAL_PORT)",
    ]);
    expect(configError(() => loadLauncherConfig(ROOT, { BANK_PORT: '3001' }, { cluster: true }))).toEqual([
      'BANK_PORT and API_PORT+1 are both 3001: each part needs its own port',
    ]);
  });

  it('names each bad variable: a non-number port, a non-duration, a retention under one hour', () => {
    expect(configError(() => loadLauncherConfig(ROOT, { API_PORT: 'abc', RETRYSAFE_RETENTION: 'forever' }))).toEqual([
      expect.stringMatching(/^RETRYSAFE_RETENTION="forever": .*not a duration/),
      expect.stringMatching(/^API_PORT="abc": must be a whole number/),
    ]);
    expect(configError(() => loadLauncherConfig(ROOT, { RETRYSAFE_RETENTION: '59m' }))[0]).toMatch(
      /below the minimum of 1 hour \(Temporal's floor/,
    );
  });

  it('refuses port 0 and two parts on one port', () => {
    expect(configError(() => loadLauncherConfig(ROOT, { BANK_PORT: '0' }))[0]).toMatch(/^BANK_PORT="0": must be a fixed port/);
    expect(configError(() => loadLauncherConfig(ROOT, { API_PORT: '4001' }))).toEqual([
      'BANK_PORT and API_PORT are both 4001: each part needs its own port',
    ]);
  });

  it("checks every child's own settings up front, without echoing an API key secret", () => {
    const config = loadLauncherConfig(ROOT, {});
    const stack = {
      config,
      faults: false,
      prettyLogs: false,
      temporal: { address: '127.0.0.1:7233', namespace: 'default', uiUrl: 'http://localhost:8233', embedded: true },
    };
    const saved = process.env.RETRYSAFE_API_KEYS;
    process.env.RETRYSAFE_API_KEYS = 'tooshort=acme';
    try {
      const problems = configError(() => validateParts(stack));
      expect(problems).toEqual([expect.stringMatching(/^RETRYSAFE_API_KEYS entry 1: the secret is shorter.*\(api\)$/)]);
      expect(problems.join()).not.toContain('tooshort');
      process.env.RETRYSAFE_API_KEYS = 'a-long-enough-secret-0001=acme';
      expect(validateParts(stack)).toEqual({ apiKeyCount: 1, tenants: ['acme'] });
    } finally {
      if (saved === undefined) delete process.env.RETRYSAFE_API_KEYS;
      else process.env.RETRYSAFE_API_KEYS = saved;
    }
  });
});

describe('the dev server command line', () => {
  it('names the SQLite file, the ports and the namespace, and passes every dynamic config value as JSON', () => {
    const args = devServerArgs({ bin: 'temporal', dbFile: '/data/temporal.db', port: 7233, uiPort: 8233, logLevel: 'warn' });
    expect(args.slice(0, 12)).toEqual([
      'server',
      'start-dev',
      '--ip',
      '127.0.0.1',
      '--port',
      '7233',
      '--log-level',
      'warn',
      '--namespace',
      'default',
      '--db-filename',
      '/data/temporal.db',
    ]);
    expect(args.slice(12, 14)).toEqual(['--ui-port', '8233']);
    expect(args.slice(14)).toEqual(DEV_SERVER_TUNING.flatMap((s) => s.args));
    expect(args).toContain('history.transferProcessorMaxPollRPS=1000');
    expect(args).toContain('matching.enableFairness=true');
    expect(devServerArgs({ bin: 'temporal', port: 7300, headless: true })).toContain('--headless');
    expect(devServerArgs({ bin: 'temporal', port: 7300, headless: true })).not.toContain('--db-filename');
  });

  it('leaves out the tuning settings named in `without`, and refuses a name it does not know', () => {
    const [first, ...rest] = DEV_SERVER_TUNING;
    const args = devServerArgs({ bin: 'temporal', port: 7300, without: [first!.name] });
    expect(args.slice(10)).toEqual(rest.flatMap((s) => s.args));
    expect(() => devServerArgs({ bin: 'temporal', port: 7300, without: ['no-such-setting'] })).toThrow(/no-such-setting/);
  });

  it('never turns SQLite durability off', () => {
    const pragmas = DEV_SERVER_TUNING.flatMap((s) => s.args.filter((_, i, all) => all[i - 1] === '--sqlite-pragma'));
    expect(pragmas.filter((p) => /^synchronous=/i.test(p))).not.toContainEqual(expect.stringMatching(/=(off|0)$/i));
  });
});

describe('worker readiness line', () => {
  it('matches the JSON line and the pino-pretty one (colored, as on a terminal)', () => {
    const entry = { level: 30, time: Date.now(), pid: 1, hostname: 'h', name: 'worker', taskQueue: 'q', msg: 'worker ready' };
    expect(isWorkerReadyLine(JSON.stringify(entry))).toBe(true);
    const pretty = prettyFactory({ colorize: true, translateTime: 'HH:MM:ss.l', ignore: 'pid,hostname' })(entry);
    expect(isWorkerReadyLine(pretty.split('\n')[0]!)).toBe(true);
  });

  it('does not match other lines that mention it', () => {
    expect(isWorkerReadyLine(JSON.stringify({ level: 50, msg: 'worker ready check failed' }))).toBe(false);
    expect(isWorkerReadyLine('[12:00:00.000] ERROR (worker): worker ready never came')).toBe(false);
  });
});

describe('port conflicts in a child output', () => {
  it("finds the port in Node's and Go's messages", () => {
    expect(addressInUse('Error: listen EADDRINUSE: address already in use 127.0.0.1:4001')).toEqual({ port: 4001 });
    expect(addressInUse('listen tcp 127.0.0.1:7233: bind: address already in use')).toEqual({ port: 7233 });
    expect(addressInUse('all good on 127.0.0.1:4001')).toBeUndefined();
  });
});

const clusterInfo = {
  address: '127.0.0.1:7233',
  namespace: 'default',
  uiUrl: 'http://localhost:8233',
  embedded: false,
  cluster: { postgres: '127.0.0.1:7235', processes: ['postgres', 'temporal-frontend'], logDir: '/repo/.data/cluster/logs' },
};

describe('banner', () => {
  const config = loadLauncherConfig(ROOT, {});
  const temporal = { address: '127.0.0.1:7233', namespace: 'default', uiUrl: 'http://localhost:8233', embedded: true };
  const services = (faults: boolean) => stackParts({ config, faults, prettyLogs: false, temporal });
  const output = new Output(false);

  it('in dev mode, lists every part and says so, with a curl that needs no key', () => {
    const text = renderBanner(
      { config, settings: { apiKeyCount: 0, tenants: [] }, temporal, services: services(false), readyMs: 6_250 },
      output,
    );
    expect(text).toContain('retrysafe is ready in 6.3 s');
    for (const url of [
      'http://localhost:3000/docs',
      'http://localhost:3000/openapi.json',
      'http://localhost:8233',
      'http://localhost:4001',
      'http://127.0.0.1:9464/metrics',
    ]) {
      expect(text).toContain(url);
    }
    expect(text).toContain('temporal.db, bank.db');
    expect(text).toContain('dev mode');
    expect(text).toContain(
      `curl -s -X POST http://localhost:3000/v1/payments -H 'Idempotency-Key: demo-1' -H 'Content-Type: application/json' -d '{"account":"acc_alice","amount":1250,"currency":"EUR"}'`,
    );
    expect(text).not.toContain('Authorization');
    expect(text).not.toContain('fault injection');
  });

  it('on the cluster, lists both APIs (the curl on the first), the cluster, PostgreSQL and its logs', () => {
    const c = loadLauncherConfig(ROOT, {}, { cluster: true });
    const text = renderBanner(
      {
        config: c,
        settings: { apiKeyCount: 0, tenants: [] },
        temporal: clusterInfo,
        services: stackParts({ config: c, faults: false, prettyLogs: false, temporal: clusterInfo }),
        readyMs: 30_000,
      },
      output,
    );
    for (const expected of [
      'API 1           http://localhost:3000',
      'API 2           http://localhost:3001',
      "namespace default, the cluster's frontend",
      'postgres, temporal-frontend',
      '127.0.0.1:7235',
      '/repo/.data/cluster/logs',
      'http://127.0.0.1:9465/metrics',
      'postgres/, logs/, bank.db, reservations.db',
      `curl -s -X POST http://localhost:3000/v1/payments`,
    ]) {
      expect(text).toContain(expected);
    }
    expect(text).not.toContain('temporal.db');
  });

  it('with API keys, adds the Authorization hint and names the tenants, never a secret', () => {
    const text = renderBanner(
      { config, settings: { apiKeyCount: 2, tenants: ['acme'] }, temporal, services: services(true), readyMs: 1 },
      output,
    );
    expect(text).toContain("-H 'Authorization: Bearer <a secret from RETRYSAFE_API_KEYS>'");
    expect(text).toContain('2 configured (tenants: acme)');
    expect(text).toContain('fault injection on');
  });
});

describe('--operations: operations defined outside the source folders', () => {
  const REPO = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
  const SHIPPING = join(REPO, 'examples', 'shipping');
  const temporal = { address: '127.0.0.1:7233', namespace: 'default', uiUrl: 'http://localhost:8233', embedded: true };
  let tmp: string;

  beforeAll(() => {
    tmp = mkdtempSync(join(tmpdir(), 'retrysafe-operations-'));
  });
  afterAll(() => rmSync(tmp, { recursive: true, force: true }));

  /** A folder with an operations.ts of this source. */
  function folder(name: string, source: string): string {
    const dir = join(tmp, name);
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'operations.ts'), source);
    return dir;
  }

  async function refusal(dirs: string[], env: Record<string, string> = {}): Promise<string[]> {
    const config = loadLauncherConfig(REPO, {}, { operations: dirs, cwd: REPO });
    try {
      await checkOutsideOperations(config.operations, env);
    } catch (err) {
      if (err instanceof ConfigError) return err.problems;
      throw err;
    }
    throw new Error('expected a ConfigError');
  }

  it('hands the API and the worker the folder as an absolute path, relative ones taken from where npm ran', () => {
    const config = loadLauncherConfig(REPO, {}, { operations: ['examples/shipping'], cwd: REPO });
    expect(config.operations).toEqual([{ given: 'examples/shipping', dir: SHIPPING }]);
    const parts = stackParts({ config, faults: false, prettyLogs: false, temporal });
    expect(Object.fromEntries(parts.map((p) => [p.name, p.env.RETRYSAFE_OPERATIONS]))).toEqual({
      bank: undefined,
      reservations: undefined,
      worker: SHIPPING,
      api: SHIPPING,
    });
    expect(loadLauncherConfig(REPO, { INIT_CWD: join(REPO, 'examples') }, { operations: ['shipping'] }).operations).toEqual([
      { given: 'shipping', dir: SHIPPING },
    ]);
    // Without the flag, nothing changes for the children.
    const plain = stackParts({ config: loadLauncherConfig(REPO, {}), faults: false, prettyLogs: false, temporal });
    expect(plain.every((p) => p.env.RETRYSAFE_OPERATIONS === undefined)).toBe(true);
  });

  it('joins RETRYSAFE_OPERATIONS and the flag, a folder named in both once', () => {
    const other = folder('other', 'export const operations = [];');
    const config = loadLauncherConfig(
      REPO,
      { RETRYSAFE_OPERATIONS: `examples/shipping, ${other}` },
      {
        operations: [SHIPPING],
        cwd: REPO,
      },
    );
    expect(config.operations.map((f) => f.dir)).toEqual([SHIPPING, other]);
  });

  it('refuses a folder that is not there, a file, and a folder without operations.ts, naming each', () => {
    expect(
      configError(() =>
        loadLauncherConfig(
          REPO,
          { RETRYSAFE_OPERATIONS: 'nowhere' },
          {
            operations: ['examples/nope', 'README.md', 'examples/shipping/service', ''],
            cwd: REPO,
          },
        ),
      ),
    ).toEqual([
      `RETRYSAFE_OPERATIONS (nowhere): not a folder (${join(REPO, 'nowhere')})`,
      `--operations examples/nope: not a folder (${join(REPO, 'examples', 'nope')})`,
      `--operations README.md: not a folder (${join(REPO, 'README.md')})`,
      '--operations examples/shipping/service: the folder has no operations.ts (it exports `operations`; see examples/shipping)',
      '--operations needs a folder, e.g. --operations examples/shipping',
    ]);
  });

  it('loads the definitions before anything starts, and names the service the worker has no URL for', async () => {
    expect(await refusal(['examples/shipping'])).toEqual([
      'the operations of examples/shipping call the service shipping, which has no base URL: set RETRYSAFE_SERVICES=shipping=http://<host>:<port>',
    ]);
    const config = loadLauncherConfig(REPO, {}, { operations: ['examples/shipping'], cwd: REPO });
    expect(await checkOutsideOperations(config.operations, { RETRYSAFE_SERVICES: 'shipping=http://127.0.0.1:4003/' })).toEqual({
      operations: [{ type: 'fulfilment', plural: 'fulfilments' }],
      services: [{ name: 'shipping', url: 'http://127.0.0.1:4003' }],
    });
    expect(await checkOutsideOperations([], {})).toEqual({ operations: [], services: [] });
  });

  it('refuses a folder whose definitions are wrong, in one line each', async () => {
    const empty = folder('empty', 'export const operations = [];\n');
    expect(await refusal([empty])).toEqual([
      `${join(empty, 'operations.ts')} must export a non-empty array \`operations\` (see examples/)`,
    ]);
    const badType = folder(
      'bad-type',
      `export const operations = [{ type: 'Ship-It', plural: 'ships', description: '', request: { properties: {} }, steps: [], unavailableCode: 'x' }];\n`,
    );
    expect((await refusal([badType]))[0]).toMatch(/^RETRYSAFE_OPERATIONS: operation "Ship-It": its type must match/);
    expect((await refusal(['examples/shipping', 'examples/shipping/../shipping/'], {}))[0]).toMatch(/has no base URL/);
  });

  it('leaves a malformed RETRYSAFE_SERVICES to the worker, whose check names it without its URL', async () => {
    const config = loadLauncherConfig(REPO, {}, { operations: ['examples/shipping'], cwd: REPO });
    expect(await checkOutsideOperations(config.operations, { RETRYSAFE_SERVICES: 'shipping=ftp://user:secret@host' })).toEqual({
      operations: [{ type: 'fulfilment', plural: 'fulfilments' }],
      services: [],
    });
    const saved = process.env.RETRYSAFE_SERVICES;
    process.env.RETRYSAFE_SERVICES = 'shipping=ftp://user:secret@host';
    try {
      const problems = configError(() => validateParts({ config, faults: false, prettyLogs: false, temporal }));
      expect(problems).toEqual(['RETRYSAFE_SERVICES entry 1 (service shipping) must be an http:// or https:// URL (worker)']);
    } finally {
      if (saved === undefined) delete process.env.RETRYSAFE_SERVICES;
      else process.env.RETRYSAFE_SERVICES = saved;
    }
  });

  it('the banner lists the operations added and where the worker reaches their services, never a credential', () => {
    const config = loadLauncherConfig(REPO, {}, { operations: ['examples/shipping'], cwd: REPO });
    const outside = {
      operations: [{ type: 'fulfilment', plural: 'fulfilments' }],
      services: [{ name: 'shipping', url: 'http://user:token@127.0.0.1:4003/v2' }],
    };
    const text = (silent: string[]) =>
      renderBanner(
        {
          config,
          settings: { apiKeyCount: 0, tenants: [] },
          temporal,
          services: stackParts({ config, faults: false, prettyLogs: false, temporal }),
          readyMs: 1,
          outside: { ...outside, silent },
        },
        new Output(false),
      );
    expect(text([])).toContain('  Operations      fulfilment (POST /v1/fulfilments)  from examples/shipping\n');
    expect(text([])).toContain('  Service         shipping at http://127.0.0.1:4003  started by you, called by the worker\n');
    expect(text(['shipping'])).toContain('shipping at http://127.0.0.1:4003  NOT ANSWERING: start it yourself');
    expect(text([])).not.toContain('token');
  });

  it('tells whether a service answers on its port', async () => {
    const server = createServer().listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    const { port } = server.address() as { port: number };
    try {
      expect(await answers(`http://127.0.0.1:${port}/base`)).toBe(true);
    } finally {
      server.close();
    }
    expect(await answers(`http://127.0.0.1:${await freePort()}`)).toBe(false);
    expect(await answers('not a url')).toBe(false);
  });
});
