// The OpenAPI document as generated clients meet it, the one the API serves (buildApp, no
// engine): redocly lint finds nothing to fault in it, with API keys and in dev mode; and a
// TypeScript client generated from it by openapi-typescript (used through openapi-fetch)
// types each operation's own answers: code that reads a payment's chargeId, a transfer's
// debitId, narrows a read on `type` and reads a problem's code compiles under strict, and
// code that reads what an answer does not have fails to.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import openapiTS, { astToString } from 'openapi-typescript';
import ts from 'typescript';
import { afterAll, describe, expect, it } from 'vitest';
import type { App } from '../../client/api/app.js';
import { auth, useEdgeApps } from './edge.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const REDOCLY = join(ROOT, 'node_modules', '@redocly', 'cli', 'bin', 'cli.js');

const edge = useEdgeApps();
const work = mkdtempSync(join(tmpdir(), 'retrysafe-openapi-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** The document as a client on this machine reads it. */
async function served(app: App, headers: Record<string, string> = auth): Promise<Record<string, unknown>> {
  const res = await app.inject({ url: '/openapi.json', headers: { ...headers, host: '127.0.0.1:3000' } });
  expect(res.statusCode).toBe(200);
  return res.json();
}

interface LintReport {
  totals: { errors: number; warnings: number };
  problems: Array<{ ruleId: string; severity: string; message: string; location: Array<{ pointer: string }> }>;
}

async function redoclyLint(document: unknown, name: string): Promise<LintReport> {
  const file = join(work, `${name}.json`);
  writeFileSync(file, JSON.stringify(document));
  // Its recommended rules, no config file of anyone's (cwd is the empty work folder), no
  // telemetry or update check: the catalog is all this machine reaches. It exits 1 when it
  // finds an error; the report says which.
  const stdout = await new Promise<string>((resolve, reject) => {
    execFile(
      process.execPath,
      [REDOCLY, 'lint', '--format=json', '--extends=recommended', file],
      {
        cwd: work,
        env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', NO_COLOR: '1' },
        timeout: 60_000,
      },
      (err, out, stderr) =>
        out.trim().startsWith('{') ? resolve(out) : reject(new Error(`redocly lint: ${err?.message ?? ''}\n${stderr}`)),
    );
  });
  return JSON.parse(stdout) as LintReport;
}

const summary = (report: LintReport) =>
  report.problems.map((p) => `${p.severity} ${p.ruleId} at ${p.location[0]?.pointer ?? '?'}: ${p.message}`).join('\n');

describe('redocly lint (recommended rules)', () => {
  it('finds no error and no warning in the document, with API keys and in dev mode', { timeout: 60_000 }, async () => {
    for (const [name, document] of [
      ['with-keys', await served(edge.app)],
      ['dev-mode', await served(edge.devApp, {})],
    ] as const) {
      const report = await redoclyLint(document, name);
      expect(report.totals, `${name}:\n${summary(report)}`).toEqual({ errors: 0, warnings: 0, ignored: 0 });
    }
  });

  it('would find an error in a document without servers: the lint reads what it is given', { timeout: 60_000 }, async () => {
    const { servers: _servers, ...document } = await served(edge.app);
    const report = await redoclyLint(document, 'no-servers');
    expect(report.problems.map((p) => `${p.severity} ${p.ruleId}`)).toContain('error no-empty-servers');
  });
});

// A client's code, type-checked against the client generated from the served document.
// Lines ending in `// fails:` must each be a type error; the first file must have none.
const USAGE = `
import createClient from 'openapi-fetch';
import type { components, paths } from './api.js';

type Operation = components['schemas']['Operation'];
type Problem = components['schemas']['Problem'];

const client = createClient<paths>({ baseUrl: 'http://127.0.0.1:3000', headers: { authorization: 'Bearer sk_x' } });

function problemCode(problem: Problem): string {
  const code: string = problem.code;
  if (problem.code === 'idempotency_key_reused') return code + ': ' + (problem.differences ?? []).join(', ');
  if (problem.code === 'invalid_request') return code + ': ' + (problem.errors ?? []).map((e) => e.field).join(', ');
  return code;
}

export async function pay(key: string): Promise<string> {
  const { data, error } = await client.POST('/v1/payments', {
    params: { header: { 'idempotency-key': key, prefer: 'wait=10' } },
    body: { account: 'acc_alice', amount: 1250, currency: 'EUR' },
  });
  if (error) return problemCode(error);
  const type: 'payment' = data.type;
  if (data.status === 'succeeded' && data.result) {
    const chargeId: string = data.result.chargeId;
    return type + ' ' + chargeId;
  }
  return data.error?.code ?? data.status;
}

export async function transfer(key: string): Promise<[string, string] | undefined> {
  const { data } = await client.POST('/v1/transfers', {
    params: { header: { 'idempotency-key': key } },
    body: { from: 'acc_alice', to: 'acc_bob', amount: 500, currency: 'EUR' },
  });
  if (!data?.result) return undefined;
  const debitId: string = data.result.debitId;
  const creditId: string = data.result.creditId;
  return [debitId, creditId];
}

export function describeOperation(operation: Operation): string {
  switch (operation.type) {
    case 'payment':
      return 'charge ' + (operation.result?.chargeId ?? '-');
    case 'checkout':
      return 'hold ' + (operation.result?.reservationId ?? '-') + ', charge ' + (operation.result?.chargeId ?? '-');
    case 'transfer':
      return 'debit ' + (operation.result?.debitId ?? '-') + ', credit ' + (operation.result?.creditId ?? '-');
    default: {
      const none: never = operation;
      return none;
    }
  }
}

export async function read(key: string): Promise<string> {
  const { data, error } = await client.GET('/v1/operations/{key}', { params: { path: { key } } });
  if (error) return problemCode(error);
  return describeOperation(data) + (data.links.temporalUi ?? '') + data.steps.map((s) => s.downstreamKey).join(',');
}

export async function cancel(key: string): Promise<boolean> {
  const { data } = await client.POST('/v1/operations/{key}/cancel', { params: { path: { key } } });
  return data?.cancelRequested ?? false;
}

export async function transfers(): Promise<string[]> {
  const { data } = await client.GET('/v1/operations', { params: { query: { type: 'transfer', limit: '10' } } });
  const cursor: string | null | undefined = data?.nextCursor;
  return [...(data?.operations.map(describeOperation) ?? []), cursor ?? ''];
}

export async function alive(): Promise<boolean> {
  const { data } = await client.GET('/healthz');
  return data?.status === 'ok';
}
`;

const WRONG = `
import createClient from 'openapi-fetch';
import type { components, paths } from './api.js';

declare const payment: components['schemas']['PaymentOperation'] & { result: { chargeId: string } };
declare const transfer: components['schemas']['TransferOperation'] & { result: { debitId: string } };
declare const operation: components['schemas']['Operation'];
declare const problem: components['schemas']['Problem'];
const client = createClient<paths>({ baseUrl: 'http://127.0.0.1:3000' });

export const a = payment.result.nonexistent; // fails: a payment's result has no such field
export const b = transfer.result.chargeId; // fails: a transfer's result has no chargeId
export const c = operation.type === 'payment' ? operation.result?.debitId : undefined; // fails: narrowed to a payment
export const d: 'transfer' = payment.type; // fails: a payment's type is payment
export const e = problem.code === 'no_such_code'; // fails: not a code the API answers with
export const f = client.POST('/v1/payments', { params: { header: { 'idempotency-key': 'k' } }, body: { account: 'acc_alice', amount: 1250 } }); // fails: no currency
export const g = client.POST('/v1/payments', { body: { account: 'acc_alice', amount: 1250, currency: 'EUR' } }); // fails: no Idempotency-Key
export const h = client.POST('/v1/operations/{key}/cancel', {}); // fails: no key
`;

/** Type errors of each file, by line (1-based), with the generated client at ./api.d.ts. */
function typeErrors(files: Record<string, string>): Record<string, Map<number, string>> {
  // Virtual files in a folder of the repository, so `openapi-fetch` resolves from its node_modules.
  const dir = join(ROOT, 'test', 'api', '.generated-client');
  const virtual = new Map(Object.entries(files).map(([name, text]) => [join(dir, name), text]));
  const options: ts.CompilerOptions = {
    strict: true,
    noEmit: true,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    lib: ['lib.es2022.d.ts', 'lib.dom.d.ts'],
    types: [],
    skipLibCheck: true,
  };
  const host = ts.createCompilerHost(options);
  const { fileExists, readFile, getSourceFile, directoryExists } = host;
  host.fileExists = (f) => virtual.has(f) || fileExists.call(host, f);
  host.readFile = (f) => virtual.get(f) ?? readFile.call(host, f);
  host.directoryExists = (d) => d === dir || (directoryExists?.call(host, d) ?? true);
  host.getSourceFile = (f, language, ...rest) => {
    const text = virtual.get(f);
    return text !== undefined ? ts.createSourceFile(f, text, language) : getSourceFile.call(host, f, language, ...rest);
  };
  const roots = Object.keys(files).filter((name) => name.endsWith('.ts') && !name.endsWith('.d.ts'));
  const program = ts.createProgram(
    roots.map((name) => join(dir, name)),
    options,
    host,
  );
  const out: Record<string, Map<number, string>> = Object.fromEntries(roots.map((name) => [name, new Map()]));
  for (const diagnostic of ts.getPreEmitDiagnostics(program)) {
    const file = diagnostic.file ? Object.keys(out).find((name) => join(dir, name) === diagnostic.file!.fileName) : undefined;
    const line = diagnostic.file ? diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start ?? 0).line + 1 : 0;
    const text = ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n');
    // A diagnostic outside the usage files (the generated client itself, a missing lib) is the first file's.
    const errors = out[file ?? roots[0]!]!;
    errors.set(line, [errors.get(line), text].filter(Boolean).join('\n'));
  }
  return out;
}

describe('a TypeScript client generated by openapi-typescript', () => {
  it('types each operation type its own answer: what a client reads compiles, what is not there does not', async () => {
    const generated = astToString(await openapiTS(JSON.stringify(await served(edge.app))));
    const errors = typeErrors({ 'api.d.ts': generated, 'usage.ts': USAGE, 'wrong.ts': WRONG });
    expect([...errors['usage.ts']!].map(([line, text]) => `usage.ts:${line}: ${text}`)).toEqual([]);
    const failing = WRONG.split('\n').flatMap((text, i) => (text.includes('// fails:') ? [i + 1] : []));
    expect(failing).toHaveLength(8);
    const wrong = errors['wrong.ts']!;
    expect(
      [...wrong.keys()].sort((x, y) => x - y),
      [...wrong].map(([l, t]) => `wrong.ts:${l}: ${t}`).join('\n'),
    ).toEqual(failing);
  });
});
