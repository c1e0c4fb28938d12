// operations.cancel against a scripted API on loopback: what it sends, and what each
// answer of the contract becomes (202 → the operation, 409 → a typed error, 404 → the
// not-found error). Time is injected, so retries are read, not waited for.
import { describe, expect, it } from 'vitest';
import {
  ApiError,
  createClient,
  OperationAlreadyCompletedError,
  type ClientOptions,
  type RetrySafe,
} from '../../client/lib/index.js';
import { operation, problem, useScriptedApi } from './scripted-api.js';

const api = useScriptedApi();

function client(opts: ClientOptions = {}): { rs: RetrySafe; sleeps: number[] } {
  let clock = 1_000_000;
  const sleeps: number[] = [];
  const rs = createClient({
    baseUrl: api.url,
    apiKey: 'secret-1',
    now: () => clock,
    sleep: async (ms) => {
      sleeps.push(ms);
      clock += ms;
    },
    random: () => 1,
    ...opts,
  });
  return { rs, sleeps };
}

const requested = (key: string) => operation(key, 'processing', { cancelRequested: true });

describe('operations.cancel', () => {
  it('POSTs to the operation’s cancel path with no body and no Idempotency-Key, and returns the operation (202)', async () => {
    api.script = [{ status: 202, body: requested('order/7'), headers: { location: '/v1/operations/order%2F7' } }];
    const op = await client().rs.operations.cancel('order/7');
    expect(op).toEqual(requested('order/7'));
    expect(op.cancelRequested).toBe(true);
    expect(api.seen).toHaveLength(1);
    const [sent] = api.seen;
    expect(sent).toMatchObject({ method: 'POST', url: '/v1/operations/order%2F7/cancel', body: '' });
    expect(sent?.headers.authorization).toBe('Bearer secret-1');
    expect(sent?.headers['idempotency-key']).toBeUndefined();
    expect(sent?.headers.prefer).toBeUndefined();
    expect(sent?.headers['content-type']).toBeUndefined();
  });

  it('a repeated cancel answers the same (202 again): the same operation, nothing thrown', async () => {
    api.script = [
      { status: 202, body: requested('k-twice') },
      { status: 202, body: requested('k-twice') },
    ];
    const { rs } = client();
    expect(await rs.operations.cancel('k-twice')).toEqual(await rs.operations.cancel('k-twice'));
    expect(api.seen.map((s) => s.url)).toEqual(['/v1/operations/k-twice/cancel', '/v1/operations/k-twice/cancel']);
  });

  it('409 operation_already_completed is an OperationAlreadyCompletedError with the key; not retried', async () => {
    api.script = [problem(409, 'operation_already_completed'), { status: 202, body: requested('never') }];
    const { rs, sleeps } = client();
    const error = await rs.operations.cancel('k-done').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OperationAlreadyCompletedError);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({
      name: 'OperationAlreadyCompletedError',
      key: 'k-done',
      status: 409,
      code: 'operation_already_completed',
      retryable: false,
      message: 'operation_already_completed detail',
    });
    expect(api.seen).toHaveLength(1);
    expect(sleeps).toEqual([]);
  });

  it('404 is the usual ApiError operation_not_found, not retried', async () => {
    api.script = [problem(404, 'operation_not_found')];
    const error = await client()
      .rs.operations.cancel('k-unknown')
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).not.toBeInstanceOf(OperationAlreadyCompletedError);
    expect(error).toMatchObject({ status: 404, code: 'operation_not_found', key: 'k-unknown', retryable: false });
    expect(api.seen).toHaveLength(1);
  });

  it('retries a 503 and a dropped connection on the same path (a cancel is harmless to repeat)', async () => {
    api.script = [
      { ...problem(503, 'engine_unavailable'), headers: { 'retry-after': '2' } },
      'reset',
      { status: 202, body: requested('k-retry') },
    ];
    const { rs, sleeps } = client({ retry: { baseDelayMs: 100 } });
    const op = await rs.operations.cancel('k-retry');
    expect(op.cancelRequested).toBe(true);
    expect(sleeps).toEqual([2_000, 200]);
    expect(api.seen.map((s) => `${s.method} ${s.url}`)).toEqual(Array(3).fill('POST /v1/operations/k-retry/cancel'));
  });

  it('a 409 with another code stays a plain ApiError', async () => {
    api.script = [problem(409, 'conflict')];
    const error = await client()
      .rs.operations.cancel('k-409')
      .catch((e: unknown) => e);
    expect(error).not.toBeInstanceOf(OperationAlreadyCompletedError);
    expect(error).toMatchObject({ status: 409, code: 'conflict' });
  });

  it('a 202 whose body is not an operation is an invalid_response', async () => {
    api.script = [{ status: 202, body: { accepted: true } }];
    await expect(client().rs.operations.cancel('k-junk')).rejects.toMatchObject({
      code: 'invalid_response',
      status: 202,
      key: 'k-junk',
    });
  });
});
