// The client checks a key before sending it with a rule of its own (the package carries
// nothing of the server); it must accept exactly what the API accepts.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isValidKey as apiAccepts, MAX_KEY_LENGTH as API_MAX } from '../../client/api/idempotency-key.js';
import { isValidKey, MAX_KEY_LENGTH } from '../../client/lib/index.js';

describe('the client key rule', () => {
  it('is the API rule: same length bound, same verdict on any string', () => {
    expect(MAX_KEY_LENGTH).toBe(API_MAX);
    const near = fc.oneof(
      fc.string({ unit: fc.constantFrom('a', ' ', '"', '~', '\x7f', '\t', 'é', '😀'), maxLength: 8 }),
      fc.string({ unit: 'grapheme-ascii', minLength: MAX_KEY_LENGTH - 2, maxLength: MAX_KEY_LENGTH + 2 }),
      fc.string({ unit: 'binary', maxLength: 20 }),
    );
    fc.assert(
      fc.property(near, (key) => isValidKey(key) === apiAccepts(key)),
      { numRuns: 2000 },
    );
  });

  it.each([
    ['order-42', true],
    ['a/b:c"d\\e', true],
    ['x'.repeat(255), true],
    ['x'.repeat(256), false],
    ['', false],
    ['has space', false],
    ['tab\there', false],
    ['café', false],
  ])('%j → %s', (key, ok) => {
    expect(isValidKey(key)).toBe(ok);
    expect(apiAccepts(key)).toBe(ok);
  });
});
