// `retrysafe cancel <key>` against a scripted API on loopback: what each answer of the
// contract prints and which exit code it gives (0 under way or already cancelled, 5 too
// late, 4 anything else).
import { describe, expect, it } from 'vitest';
import { freePort } from '../../tools/supervisor/ports.js';
import { runCli } from '../client/helpers.js';
import { operation, problem, useScriptedApi } from '../client/scripted-api.js';
import { runHere } from './in-process.js';

const api = useScriptedApi();

const cancel = (key: string, ...more: string[]) => runHere(['cancel', key, '--api-url', api.url, '--api-key', 'sk-1', ...more]);
const requested = (key: string) => operation(key, 'processing', { cancelRequested: true });
const failed = (key: string, code: string, compensations: string[] = []) =>
  operation(key, 'failed', { error: { code, message: `${code} message`, compensations } });

describe('retrysafe cancel', () => {
  it('202: prints the operation with the cancel requested and how to follow it; exit 0', async () => {
    api.script = [{ status: 202, body: requested('order-7') }];
    const run = await cancel('order-7');
    expect(run.exitCode).toBe(0);
    expect(run.stdout).toMatch(/│ key\s+│ order-7\s+│/);
    expect(run.stdout).toMatch(/│ status\s+│ processing\s+│/);
    expect(run.stdout).toMatch(/│ cancel\s+│ requested: stops at the next step boundary\s+│/);
    expect(run.stderr).toBe(
      'cancel requested: order-7 stops at its next step boundary, undoes what it did and ends failed (cancelled)\n' +
        'follow it with: retrysafe wait order-7\n',
    );
    expect(api.seen.map((s) => `${s.method} ${s.url} ${s.headers.authorization}`)).toEqual([
      'POST /v1/operations/order-7/cancel Bearer sk-1',
    ]);
  });

  it('--json prints the API’s operation as it came', async () => {
    api.script = [{ status: 202, body: requested('a/b') }];
    const run = await cancel('a/b', '--json');
    expect(run.exitCode).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual(requested('a/b'));
    expect(api.seen[0]?.url).toBe('/v1/operations/a%2Fb/cancel');
  });

  it('409 for an operation that already ended cancelled: prints it, exit 0 (a repeated cancel)', async () => {
    api.script = [problem(409, 'operation_already_completed'), { status: 200, body: failed('k-c', 'cancelled') }];
    const run = await cancel('k-c');
    expect(run.exitCode).toBe(0);
    expect(run.stdout).toMatch(/│ error\s+│ cancelled: cancelled message\s+│/);
    expect(run.stderr).toBe('already cancelled: k-c ended failed (cancelled)\n');
    expect(api.seen.map((s) => `${s.method} ${s.url}`)).toEqual(['POST /v1/operations/k-c/cancel', 'GET /v1/operations/k-c']);
  });

  it('409 for a succeeded operation: too late, prints it, exit 5', async () => {
    api.script = [problem(409, 'operation_already_completed'), { status: 200, body: operation('k-s', 'succeeded') }];
    const run = await cancel('k-s');
    expect(run.exitCode).toBe(5);
    expect(run.stdout).toMatch(/│ status\s+│ succeeded\s+│/);
    expect(run.stdout).toContain('chargeId=ch_1');
    expect(run.stderr).toBe('nothing to cancel: k-s had already succeeded\n');
  });

  it('409 for an operation that failed otherwise: exit 5 naming its code; --json prints the operation', async () => {
    const op = failed('k-f', 'insufficient_funds', ['release_reservation']);
    api.script = [problem(409, 'operation_already_completed'), { status: 200, body: op }];
    const run = await cancel('k-f', '--json');
    expect(run.exitCode).toBe(5);
    expect(JSON.parse(run.stdout)).toEqual(op);
    expect(run.stderr).toBe('nothing to cancel: k-f had already failed (insufficient_funds)\n');
  });

  it('409 and then no answer to the read: still exit 5, from the 409 alone', async () => {
    api.script = [problem(409, 'operation_already_completed'), problem(500, 'internal_error')];
    const run = await cancel('k-x', '--json');
    expect(run.exitCode).toBe(5);
    expect(JSON.parse(run.stdout)).toEqual({
      error: {
        status: 409,
        code: 'operation_already_completed',
        message: 'operation_already_completed detail',
        key: 'k-x',
      },
    });
    expect(run.stderr).toBe('nothing to cancel: k-x has already completed\n');
  });

  it.each([
    ['404: exit 4 with operation_not_found', 404, 'operation_not_found', ''],
    ['401: exit 4 and how to send an API key', 401, 'unauthorized', 'send an API key with --api-key or RETRYSAFE_API_KEY\n'],
  ])('%s', async (_name, status, code, hint) => {
    api.script = [problem(status, code)];
    const run = await cancel(`k-${status}`);
    expect(run.exitCode).toBe(4);
    expect(run.stdout).toBe('');
    expect(run.stderr).toBe(`error: ${status} ${code}: ${code} detail\n${hint}`);
  });

  it('as a process, with nothing listening: exit 4 and where the API was expected', async () => {
    const port = await freePort();
    const run = await runCli(['cancel', 'k-off', '--timeout', '1s', '--api-url', `http://127.0.0.1:${port}`]);
    expect(run.exitCode).toBe(4);
    expect(run.stderr).toContain(`cannot reach http://127.0.0.1:${port}/v1/operations/k-off/cancel: ECONNREFUSED`);
    expect(run.stderr).toContain('is the API running');
  });
});
