// The HTTP edge both sandboxes share: the Idempotency-Key grammar, body limits and media
// types, and unknown routes, all answered with problem documents and no key spent; the
// health check; and a write lock held elsewhere, answered 409 and retried.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../downstream/shared/db.js';
import { expectProblem, sandboxKey } from '../support/sandbox-harness.js';
import { effect, SANDBOXES, type SandboxKind } from './kinds.js';

describe.each(SANDBOXES)('$name edge', (kind: SandboxKind) => {
  let service: Awaited<ReturnType<SandboxKind['start']>>;
  beforeAll(async () => {
    service = await kind.start();
  });
  afterAll(async () => {
    await service.close();
  });
  const send = (key: string, body?: unknown) => effect(kind, service.call, key, body);

  describe('the Idempotency-Key header', () => {
    it('missing → 400 idempotency_key_missing', async () => {
      expectProblem(await service.call('POST', kind.effectPath, { body: kind.goodBody }), 400, 'idempotency_key_missing');
    });

    it('513 characters → 400 idempotency_key_invalid; 512 are fine', async () => {
      expectProblem(await send('k'.repeat(513)), 400, 'idempotency_key_invalid');
      expectProblem(await send(`"${'k'.repeat(513)}"`), 400, 'idempotency_key_invalid');
      const max = `${sandboxKey('edge')}/`.padEnd(512, 'x');
      const res = await send(max);
      expect(res.status).toBe(201);
      expect(res.body.key).toBe(max);
    });

    it.each([
      ['non-ASCII', 'clé-1'],
      ['a bare key with a space', 'a b'],
      ['an empty sf-string', '""'],
      ['an unterminated sf-string', '"abc'],
      ['an sf-string with parameters', '"abc";v=1'],
      ['an sf-string with trailing garbage', '"abc" x'],
      ['two keys', 'a, b'],
      ['a key wrapped in no-break spaces (not HTTP whitespace)', '\u00a0abc\u00a0'],
    ])('%s → 400 idempotency_key_invalid', async (_name, key) => {
      expectProblem(await send(key), 400, 'idempotency_key_invalid');
    });

    it('an sf-string may hold a space and escaped quotes', async () => {
      const key = `${sandboxKey('edge')} "quoted"`;
      const sf = `"${key.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
      const res = await send(sf);
      expect(res.status).toBe(201);
      expect(res.body.key).toBe(key);
    });
  });

  describe('the body', () => {
    it('malformed JSON → 400 invalid_request, key unused', async () => {
      const key = sandboxKey('edge');
      expectProblem(await service.call('POST', kind.effectPath, { key, raw: '{"a":' }), 400, 'invalid_request');
      expect(service.keyRows(key)).toBe(0);
    });

    it('no body → 400 invalid_request', async () => {
      expectProblem(await service.call('POST', kind.effectPath, { key: sandboxKey('edge') }), 400, 'invalid_request');
    });

    it('an array → 400 invalid_request naming the body', async () => {
      const problem = expectProblem(await send(sandboxKey('edge'), [kind.goodBody]), 400, 'invalid_request');
      expect(problem.errors).toEqual(expect.arrayContaining([expect.objectContaining({ field: 'body' })]));
    });

    it('a body over 64 KiB → 413 payload_too_large', async () => {
      const raw = JSON.stringify({ ...kind.goodBody, pad: 'x'.repeat(70_000) });
      expectProblem(await service.call('POST', kind.effectPath, { key: sandboxKey('edge'), raw }), 413, 'payload_too_large');
    });

    it('a body that is not JSON → 415 unsupported_media_type', async () => {
      const res = await service.call('POST', kind.effectPath, {
        key: sandboxKey('edge'),
        raw: '<effect/>',
        headers: { 'content-type': 'application/xml' },
      });
      expectProblem(res, 415, 'unsupported_media_type');
    });
  });

  it('an unknown route → 404 not_found problem', async () => {
    expectProblem(await service.call('GET', '/nope'), 404, 'not_found');
    expectProblem(await service.call('DELETE', kind.effectPath), 404, 'not_found');
  });

  it('GET /healthz answers ok', async () => {
    const res = await service.call('GET', '/healthz');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'ok' });
  });

  it('when another process holds the write lock past busy_timeout, answers 409 and a retry succeeds', async () => {
    const impatient = await kind.start({ busyTimeoutMs: 0 });
    const other = openDatabase(impatient.dbPath);
    try {
      const key = sandboxKey('edge');
      other.exec('BEGIN IMMEDIATE');
      expectProblem(await effect(kind, impatient.call, key), 409, 'request_in_progress');
      // Reads never wait for the writer (WAL).
      expect((await impatient.call('GET', kind.seededRead.path)).body).toEqual(kind.seededRead.before);
      other.exec('ROLLBACK');

      const retry = await effect(kind, impatient.call, key);
      expect(retry.status).toBe(201);
      expect(retry.headers.get('idempotent-replayed')).toBe('false');
      expect((await impatient.call('GET', kind.seededRead.path)).body).toEqual(kind.seededRead.afterOneEffect);
    } finally {
      other.close();
      await impatient.close();
    }
  });
});
