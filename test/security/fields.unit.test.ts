// Keys and fields that would resolve elsewhere or read differently from what they hold: the
// keys `.` and `..` (their Location would name another resource) are 400
// idempotency_key_invalid; identifier fields (`account`, `from`, `to`, `sku`) hold only
// letters, digits and `._:-`; free text refuses control and bidirectional characters; and
// text is normalised to NFC, so one request typed two ways is one fingerprint. Refused
// requests start nothing. The sandboxes share the key toolkit and still take every key
// retrysafe derives.
import { describe, expect, it } from 'vitest';
import { fingerprint } from '../../client/api/fingerprint.js';
import { isValidKey as apiAcceptsKey } from '../../client/api/idempotency-key.js';
import { isValidKey as clientAcceptsKey } from '../../client/lib/keys.js';
import { boundRequest, normaliseRequest } from '../../client/api/requests.js';
import { checkKey } from '../../common/http/idempotency-key.js';
import { DOWNSTREAM_KEY_RULES, keyFromPath, requireKey } from '../../downstream/shared/idempotency-key.js';
import { downstreamKey } from '../../workflows/identity.js';
import { builtInCatalog } from '../../workflows/catalog.js';
import { auth, checkout, expectProblem, payment, useEdgeApps } from '../api/edge.js';

const edge = useEdgeApps();
const start = (path: string, payload: unknown, key = 'order-42') =>
  edge.post(path, { headers: { ...auth, 'idempotency-key': key }, payload });

describe('the keys "." and ".."', () => {
  it.each(['.', '..', '"."', '".."', ' .. '])('%j is 400 idempotency_key_invalid, and nothing starts', async (key) => {
    for (const [path, body] of [
      ['/v1/payments', payment],
      ['/v1/checkouts', checkout],
    ] as const) {
      const problem = expectProblem(await start(path, body, key), 400, 'idempotency_key_invalid');
      expect(problem.detail).toMatch(/cannot be "\." or "\.\."/);
    }
    expect(edge.startSpy).not.toHaveBeenCalled();
  });

  it('name no operation in a path either, for the API and for the client and CLI', () => {
    // A raw `GET /v1/operations/%2E` reaches the route (most clients resolve the dot segment
    // away first): the route answers operation_not_found for a key that cannot be one.
    for (const key of ['.', '..']) {
      expect(apiAcceptsKey(key)).toBe(false);
      expect(clientAcceptsKey(key)).toBe(false);
    }
    for (const key of ['...', '.a', 'a..']) expect([apiAcceptsKey(key), clientAcceptsKey(key)]).toEqual([true, true]);
  });

  it('are the only dot keys refused: "...", ".a" and "a." pass the edge (and reach the engine)', async () => {
    for (const key of ['...', '.a', 'a.', './x']) {
      expectProblem(await start('/v1/payments', payment, key), 503, 'engine_unavailable');
    }
  });
});

describe('identifier fields', () => {
  it.each([
    ['a NUL in account', '/v1/payments', { ...payment, account: 'acc_alice\u0000' }, 'account'],
    ['a newline in account', '/v1/payments', { ...payment, account: 'acc\nalice' }, 'account'],
    ['a space in account', '/v1/payments', { ...payment, account: 'acc alice' }, 'account'],
    ['a backtick in account', '/v1/payments', { ...payment, account: 'acc`x' }, 'account'],
    ['an account starting with "-"', '/v1/payments', { ...payment, account: '-acc' }, 'account'],
    ['a non-ASCII account', '/v1/payments', { ...payment, account: 'accé' }, 'account'],
    ['a "/" in from', '/v1/transfers', { from: 'acc/a', to: 'acc_b', amount: 1, currency: 'EUR' }, 'from'],
    ['a bidi override in to', '/v1/transfers', { from: 'acc_a', to: 'acc\u202eb', amount: 1, currency: 'EUR' }, 'to'],
    ['a NUL in a sku', '/v1/checkouts', { ...checkout, items: [{ sku: 'sku\u0000book', quantity: 1 }] }, 'items[0].sku'],
  ])('%s is 400 invalid_request naming the field, and nothing starts', async (_name, path, body, field) => {
    const problem = expectProblem(await start(path, body), 400, 'invalid_request');
    expect(problem.errors).toEqual([
      { field, message: 'must start with a letter or digit and hold only letters, digits, ".", "_", ":" or "-"' },
    ]);
    expect(edge.startSpy).not.toHaveBeenCalled();
  });

  it('take every id the demo and the tests use', async () => {
    for (const account of [
      'acc_alice',
      'acc_bob',
      'acc-1a2b3c4d',
      'acc_0195d2f0-1c2e-7000-8000-00000000abcd',
      'A',
      'x'.repeat(128),
    ]) {
      expectProblem(await start('/v1/payments', { ...payment, account }), 503, 'engine_unavailable');
    }
    expectProblem(await start('/v1/payments', { ...payment, account: 'x'.repeat(129) }), 400, 'invalid_request');
  });
});

describe('free text', () => {
  it.each([
    ['a NUL', 'pay\u0000ment'],
    ['a newline', 'line one\nline two'],
    ['a DEL', 'x\u007f'],
    ['a C1 control', 'x\u0085y'],
    ['a right-to-left override', 'invoice \u202eexe.pdf'],
    ['a left-to-right isolate', 'a\u2066b\u2069'],
    ['a right-to-left mark', 'a\u200fb'],
    ['a line separator', 'a\u2028b'],
  ])('with %s is 400 invalid_request naming description', async (_name, description) => {
    const problem = expectProblem(await start('/v1/payments', { ...payment, description }), 400, 'invalid_request');
    expect(problem.errors).toEqual([
      { field: 'description', message: 'must not hold control characters, line separators or bidirectional marks' },
    ]);
  });

  it('keeps accents, other scripts, emoji (joiners included) and markdown characters', async () => {
    const description = 'Café ☕ für Zoë · 東京 · 👩‍💻 · [a](b) *c* `d` <e>';
    expectProblem(await start('/v1/payments', { ...payment, description }), 503, 'engine_unavailable');
  });
});

describe('Unicode normalisation', () => {
  it('makes one request of text typed composed (NFC) or decomposed (NFD): one fingerprint, stored composed', () => {
    const definition = builtInCatalog.get('payment')!;
    const composed = normaliseRequest(definition, { ...payment, description: 'Caf\u00e9 Zo\u00eb' });
    const decomposed = normaliseRequest(definition, { ...payment, description: 'Cafe\u0301 Zoe\u0308' });
    expect(decomposed.description).toBe('Caf\u00e9 Zo\u00eb');
    expect(fingerprint('payment', boundRequest(definition, decomposed))).toBe(
      fingerprint('payment', boundRequest(definition, composed)),
    );
    expect(fingerprint('payment', boundRequest(definition, decomposed))).not.toBe(
      fingerprint('payment', boundRequest(definition, { ...composed, description: 'Cafe Zoe' })),
    );
  });
});

describe('the sandboxes, on the same key toolkit', () => {
  it('take every key retrysafe derives, in the header and in the path, and refuse "." and ".."', () => {
    for (const key of ['order-42', '...', '.a', 'a/b', 'x'.repeat(255)]) {
      const derived = downstreamKey(`acme/${key}`, 'charge');
      expect(requireKey(derived)).toBe(derived);
      expect(keyFromPath(`/charges/${encodeURIComponent(derived)}/reverse`, '/charges/', '/reverse')).toBe(derived);
    }
    for (const key of ['.', '..']) {
      expect(checkKey(key, DOWNSTREAM_KEY_RULES)).toMatchObject({ ok: false, code: 'idempotency_key_invalid' });
      expect(() => requireKey(key)).toThrow(/cannot be "\." or "\.\."/);
    }
  });
});
