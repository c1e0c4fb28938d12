// `npm start -- --operations <folder>`: operations defined outside the source folders. How
// the folders reach the API and the worker, what is refused before anything starts (a
// missing folder, wrong definitions, a service without a URL), and what the banner says of
// the operations added and their services.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { renderBanner } from '../../tools/launcher/banner.js';
import { answers, checkOutsideOperations } from '../../tools/launcher/definition-folders.js';
import { loadLauncherConfig } from '../../tools/launcher/options.js';
import { Output } from '../../tools/launcher/output.js';
import { stackParts, validateParts } from '../../tools/launcher/parts.js';
import { freePort } from '../../tools/supervisor/ports.js';
import { problemsOf, problemsOfAsync } from '../support/config-problems.js';
import { listenOnFreePort } from '../support/loopback.js';
import { EMBEDDED, stackOf } from './fixtures.js';
import { ROOT } from './harness.js';

const SHIPPING = join(ROOT, 'examples', 'shipping');
let tmp: string;

beforeAll(() => {
  tmp = mkdtempSync(join(tmpdir(), 'retrysafe-operations-'));
});
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
afterEach(() => {
  vi.unstubAllEnvs();
});

/** A folder with an operations.ts of this source. */
function folder(name: string, source: string): string {
  const dir = join(tmp, name);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'operations.ts'), source);
  return dir;
}

/** The launcher's configuration with these --operations folders, run from the repository root. */
const withOperations = (dirs: string[], env: Record<string, string> = {}) =>
  loadLauncherConfig(ROOT, env, { operations: dirs, cwd: ROOT });

const refusal = (dirs: string[], env: Record<string, string> = {}) =>
  problemsOfAsync(() => checkOutsideOperations(withOperations(dirs).operations, env));

describe('--operations: operations defined outside the source folders', () => {
  it('hands the API and the worker the folder as an absolute path, relative ones taken from where npm ran', () => {
    const config = withOperations(['examples/shipping']);
    expect(config.operations).toEqual([{ given: 'examples/shipping', dir: SHIPPING }]);
    expect(Object.fromEntries(stackParts(stackOf(config)).map((p) => [p.name, p.env.RETRYSAFE_OPERATIONS]))).toEqual({
      bank: undefined,
      reservations: undefined,
      worker: SHIPPING,
      api: SHIPPING,
    });
    expect(loadLauncherConfig(ROOT, { INIT_CWD: join(ROOT, 'examples') }, { operations: ['shipping'] }).operations).toEqual([
      { given: 'shipping', dir: SHIPPING },
    ]);
    // Without the flag, nothing changes for the children.
    const plain = stackParts(stackOf(loadLauncherConfig(ROOT, {})));
    expect(plain.every((p) => p.env.RETRYSAFE_OPERATIONS === undefined)).toBe(true);
  });

  it('joins RETRYSAFE_OPERATIONS and the flag, a folder named in both once', () => {
    const other = folder('other', 'export const operations = [];');
    const config = withOperations([SHIPPING], { RETRYSAFE_OPERATIONS: `examples/shipping, ${other}` });
    expect(config.operations.map((f) => f.dir)).toEqual([SHIPPING, other]);
  });

  it('refuses a folder that is not there, a file, and a folder without operations.ts, naming each', () => {
    const given = ['examples/nope', 'README.md', 'examples/shipping/service', ''];
    expect(problemsOf(() => withOperations(given, { RETRYSAFE_OPERATIONS: 'nowhere' }))).toEqual([
      `RETRYSAFE_OPERATIONS (nowhere): not a folder (${join(ROOT, 'nowhere')})`,
      `--operations examples/nope: not a folder (${join(ROOT, 'examples', 'nope')})`,
      `--operations README.md: not a folder (${join(ROOT, 'README.md')})`,
      '--operations examples/shipping/service: the folder has no operations.ts (it exports `operations`; see examples/shipping)',
      '--operations needs a folder, e.g. --operations examples/shipping',
    ]);
  });

  it('loads the definitions before anything starts, and names the service the worker has no URL for', async () => {
    expect(await refusal(['examples/shipping'])).toEqual([
      'the operations of examples/shipping call the service shipping, which has no base URL: set RETRYSAFE_SERVICES=shipping=http://<host>:<port>',
    ]);
    const config = withOperations(['examples/shipping']);
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
    const config = withOperations(['examples/shipping']);
    expect(await checkOutsideOperations(config.operations, { RETRYSAFE_SERVICES: 'shipping=ftp://user:secret@host' })).toEqual({
      operations: [{ type: 'fulfilment', plural: 'fulfilments' }],
      services: [],
    });
    vi.stubEnv('RETRYSAFE_SERVICES', 'shipping=ftp://user:secret@host');
    expect(problemsOf(() => validateParts(stackOf(config)))).toEqual([
      'RETRYSAFE_SERVICES entry 1 (service shipping) must be an http:// or https:// URL (worker)',
    ]);
  });

  it('the banner lists the operations added and where the worker reaches their services, never a credential', () => {
    const config = withOperations(['examples/shipping']);
    const outside = {
      operations: [{ type: 'fulfilment', plural: 'fulfilments' }],
      services: [{ name: 'shipping', url: 'http://user:token@127.0.0.1:4003/v2' }],
    };
    const text = (silent: string[]) =>
      renderBanner(
        {
          config,
          settings: { apiKeyCount: 0, tenants: [] },
          temporal: EMBEDDED,
          services: stackParts(stackOf(config)),
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
    const server = createServer();
    const url = await listenOnFreePort(server);
    try {
      expect(await answers(`${url}/base`)).toBe(true);
    } finally {
      server.close();
    }
    expect(await answers(`http://127.0.0.1:${await freePort()}`)).toBe(false);
    expect(await answers('not a url')).toBe(false);
  });
});
