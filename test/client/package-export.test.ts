// The client package (client/package.json, `retrysafe`) as a user gets it: `npm pack`
// (whose prepack builds it), the tarball installed into a fresh project outside the
// repository, then used from plain Node (no tsx, no TypeScript), from a TypeScript file,
// and through `npx retrysafe`. `npm install` fetches the package's few dependencies from
// the catalog, from npm's cache when it has them. And inside the repository,
// `retrysafe/client` resolves through the workspace link to the source the other tests use.
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, lstatSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { execa } from 'execa';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as viaPackage from 'retrysafe/client';
import * as viaPath from '../../client/lib/index.js';
import { listenOnFreePort } from '../support/loopback.js';
import { operation, problem } from './scripted-api.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const PACKAGE_DIR = join(ROOT, 'client');
const VERSION = (JSON.parse(readFileSync(join(PACKAGE_DIR, 'package.json'), 'utf8')) as { version: string }).version;

/** What the installed package and everything it pulled in may weigh (measured: about 1.1 MB). */
const MAX_INSTALLED_BYTES = 5 * 1024 * 1024;
/** What the server needs and a client user must never download. */
const SERVER_PACKAGES = ['@temporalio', 'fastify', '@fastify', 'better-sqlite3', 'typebox', 'tsx', 'pino', 'zod', 'execa'];

describe('inside the repository', () => {
  it('`retrysafe/client` is the workspace package, resolved to the same source module', () => {
    expect(viaPackage.createClient).toBe(viaPath.createClient);
    expect(viaPackage.OperationAlreadyCompletedError).toBe(viaPath.OperationAlreadyCompletedError);
    expect(viaPackage.createClient({ baseUrl: 'http://127.0.0.1:9/' }).baseUrl).toBe('http://127.0.0.1:9');
  });

  it('a repository script reaches the source with the retrysafe-source condition (no build needed)', async () => {
    const script =
      "const m = await import('retrysafe/client'); console.log(typeof m.createClient, m.OperationPendingError.name);";
    const child = await execa(
      process.execPath,
      ['--conditions=retrysafe-source', '--import', 'tsx', '--input-type=module', '-e', script],
      { cwd: ROOT, reject: false },
    );
    expect(child.stderr).toBe('');
    expect(child.stdout.trim()).toBe('function OperationPendingError');
  });
});

/** The environment of a user's shell: nothing from the npm run or the test runner that launched us. */
function cleanEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (v !== undefined && !/^(npm_|NODE_OPTIONS$|VITEST|RETRYSAFE_)/i.test(k)) env[k] = v;
  }
  return env;
}

/** Bytes of every file under `dir`, symlinks not followed. */
function bytesUnder(dir: string): number {
  let total = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) total += bytesUnder(path);
    else total += lstatSync(path).size;
  }
  return total;
}

/** Top-level package names in a node_modules folder, scopes as `@scope`. */
function topLevel(nodeModules: string): string[] {
  return readdirSync(nodeModules).filter((name) => !name.startsWith('.'));
}

describe('packed, and installed outside the repository', () => {
  let work: string;
  let app: string;
  let packed: { filename: string; size: number; files: Array<{ path: string }> };
  let api: Server;
  let apiUrl: string;
  const env = cleanEnv();

  const inApp = (file: string, args: string[], opts: { input?: string } = {}) =>
    execa(file, args, { cwd: app, env, extendEnv: false, reject: false, timeout: 120_000, ...opts });

  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), 'retrysafe-pack-'));
    const pack = await execa('npm', ['pack', '--json', '--pack-destination', work], {
      cwd: PACKAGE_DIR,
      env,
      extendEnv: false,
    });
    [packed] = JSON.parse(pack.stdout) as [typeof packed];

    app = join(work, 'app');
    mkdirSync(app);
    writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'retrysafe-user', version: '1.0.0', private: true }));
    await execa('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', join(work, packed.filename)], {
      cwd: app,
      env,
      extendEnv: false,
    });

    // An API stand-in: a cancel of `running` is accepted, of anything else is too late.
    api = createServer((req, res) => {
      const key = decodeURIComponent(/^\/v1\/operations\/([^/]+)\/cancel$/.exec(req.url ?? '')?.[1] ?? '');
      const answer =
        req.method === 'POST' && key === 'running'
          ? { status: 202, body: operation(key, 'processing', { cancelRequested: true }) }
          : problem(409, 'operation_already_completed');
      res.writeHead(answer.status, { 'content-type': answer.status === 202 ? 'application/json' : 'application/problem+json' });
      res.end(JSON.stringify(answer.body));
    });
    apiUrl = await listenOnFreePort(api);
  }, 600_000);

  afterAll(async () => {
    if (api) {
      api.closeAllConnections();
      await new Promise((r) => api.close(r));
    }
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it('the tarball holds the compiled library and CLI with their declarations, and nothing of the server or the demo', () => {
    const paths = packed.files.map((f) => f.path).sort();
    expect(paths).toEqual(
      expect.arrayContaining([
        'bin/retrysafe.js',
        'dist/lib/index.js',
        'dist/lib/index.d.ts',
        'dist/lib/operations.json',
        'dist/cli/main.js',
      ]),
    );
    expect(paths.filter((path) => path.includes('demo'))).toEqual([]);
    // The table of built-in operations is data beside the compiled code (tsc copies it).
    for (const path of paths)
      expect(path).toMatch(
        /^(package\.json|bin\/retrysafe\.js|dist\/(lib|cli)\/[\w-]+\.(js|d\.ts)|dist\/lib\/operations\.json)$/,
      );
    const manifest = JSON.parse(readFileSync(join(app, 'node_modules', 'retrysafe', 'package.json'), 'utf8')) as {
      dependencies: Record<string, string>;
    };
    expect(Object.keys(manifest.dependencies).sort()).toEqual(['cli-table3', 'commander', 'ms', 'ora', 'standardwebhooks']);
  });

  it(`installs under ${MAX_INSTALLED_BYTES / 1024 / 1024} MB, with none of the server's dependencies`, () => {
    const nodeModules = join(app, 'node_modules');
    const installed = topLevel(nodeModules);
    for (const name of SERVER_PACKAGES) expect(installed, name).not.toContain(name);
    const bytes = bytesUnder(nodeModules);
    expect(bytes, `${(bytes / 1024 / 1024).toFixed(2)} MB installed: ${installed.join(', ')}`).toBeLessThan(MAX_INSTALLED_BYTES);
  });

  it('imports from plain Node as an ES module and calls the API: a cancel accepted, and one too late', async () => {
    const script = `
      import { createClient, OperationAlreadyCompletedError } from 'retrysafe/client';
      const rs = createClient({ baseUrl: process.argv[1] });
      const op = await rs.operations.cancel('running');
      const late = await rs.operations.cancel('done').catch((e) => e);
      console.log(JSON.stringify([op.status, op.cancelRequested, late instanceof OperationAlreadyCompletedError, late.status]));`;
    const run = await inApp('node', ['--input-type=module', '-e', script, apiUrl]);
    expect(run.stderr).toBe('');
    expect(JSON.parse(run.stdout)).toEqual(['processing', true, true, 409]);
  });

  it('loads with require() too (Node 20.19+ requires an ES module without a second, CommonJS build)', async () => {
    const run = await inApp('node', [
      '-e',
      "const c = require('retrysafe/client'); console.log(typeof c.createClient, c.ApiError.name)",
    ]);
    expect(run.stderr).toBe('');
    expect(run.stdout).toBe('function ApiError');
  });

  it('its declarations type a TypeScript user’s code, strictly and on their own', async () => {
    writeFileSync(
      join(app, 'check.ts'),
      `import { createClient, OperationAlreadyCompletedError, type Operation, type ProblemCode } from 'retrysafe/client';
const rs = createClient({ baseUrl: 'http://localhost:3000' });
export async function cancel(key: string): Promise<Operation['notification']> {
  try {
    const op: Operation = await rs.operations.cancel(key);
    const expires: string | null = op.keyExpiresAt;
    // @ts-expect-error the status is a union of three literals, not any string
    const wrong: 'done' = op.status;
    return expires === null && wrong ? undefined : op.notification;
  } catch (err) {
    if (err instanceof OperationAlreadyCompletedError) {
      const code: ProblemCode | string = err.code;
      throw new Error(code);
    }
    throw err;
  }
}
`,
    );
    const tsc = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
    const run = await inApp(process.execPath, [
      tsc,
      '--noEmit',
      '--strict',
      '--skipLibCheck',
      'false',
      '--target',
      'es2022',
      '--module',
      'nodenext',
      '--moduleResolution',
      'nodenext',
      '--types',
      'node',
      '--typeRoots',
      join(ROOT, 'node_modules', '@types'),
      'check.ts',
    ]);
    expect(run.stdout + run.stderr).toBe('');
    expect(run.exitCode).toBe(0);
  });

  it('`npx retrysafe` runs the compiled CLI: --help, --version, and a cancel (exit 0)', async () => {
    const help = await inApp('npx', ['--no', '--', 'retrysafe', '--help']);
    expect(help.exitCode).toBe(0);
    expect(help.stdout).toContain('Usage: retrysafe');
    for (const command of ['pay', 'checkout', 'status', 'wait', 'list', 'cancel', 'webhooks'])
      expect(help.stdout).toContain(`  ${command}`);
    // The sandbox demo is the repository's tooling (npm run demo): the published CLI has no such command.
    expect(help.stdout).not.toMatch(/^\s+demo\b/m);
    const version = await inApp('npx', ['--no', '--', 'retrysafe', '--version']);
    expect(version.stdout).toBe(VERSION);
    const cancel = await inApp('npx', ['--no', '--', 'retrysafe', 'cancel', 'running', '--api-url', apiUrl, '--json']);
    expect(cancel.stderr).toContain('cancel requested: running stops at its next step boundary');
    expect(cancel.exitCode).toBe(0);
    expect(JSON.parse(cancel.stdout)).toMatchObject({ key: 'running', cancelRequested: true });
  });

  it('`retrysafe webhooks listen` from the package verifies a signed event (204) and refuses a forged one (400)', async () => {
    const secret = `whsec_${Buffer.alloc(32, 3).toString('base64')}`;
    const child = inApp(join(app, 'node_modules', '.bin', 'retrysafe'), [
      'webhooks',
      'listen',
      '--port',
      '0',
      '--secret',
      secret,
    ]);
    let stderr = '';
    let stdout = '';
    child.stderr?.on('data', (c: Buffer) => (stderr += c.toString()));
    child.stdout?.on('data', (c: Buffer) => (stdout += c.toString()));
    while (!/on (http:\S+)/.test(stderr)) {
      if (child.exitCode !== null) throw new Error(`the listener exited early: ${stderr}`);
      await sleep(20);
    }
    const url = /on (http:\S+)/.exec(stderr)?.[1] as string;
    const body = JSON.stringify({
      type: 'operation.succeeded',
      timestamp: '2030-01-01T00:00:01.000Z',
      data: operation('order-9', 'succeeded'),
    });
    const send = (signWith: string) => {
      const now = new Date();
      return fetch(url, {
        method: 'POST',
        body,
        headers: {
          'webhook-id': 'default/order-9/completed',
          'webhook-timestamp': String(Math.floor(now.getTime() / 1000)),
          'webhook-signature': new Webhook(signWith).sign('default/order-9/completed', now, body),
        },
      });
    };
    expect((await send(secret)).status).toBe(204);
    expect((await send(`whsec_${Buffer.alloc(32, 4).toString('base64')}`)).status).toBe(400);
    while (!stdout.includes('\n')) await sleep(20);
    child.kill('SIGINT');
    expect((await child).exitCode).toBe(0);
    expect(stdout).toBe(
      '2030-01-01T00:00:01.000Z  operation.succeeded  order-9  chargeId=ch_1  (webhook-id default/order-9/completed)\n',
    );
  });
});
