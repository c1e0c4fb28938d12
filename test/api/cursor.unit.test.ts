import { describe, expect, it } from 'vitest';
import { decodeCursor, encodeCursor } from '../../client/api/engine/cursor.js';

describe('list cursor', () => {
  const token = Buffer.from('{"StartTime":"2026-01-01T00:00:00Z"}');

  it('round-trips the page token for the same query', () => {
    const cursor = encodeCursor(token, "Tenant = 'acme'");
    expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(decodeCursor(cursor, "Tenant = 'acme'")).toEqual(token);
  });

  it('refuses a cursor made for another query (another tenant or filter)', () => {
    const cursor = encodeCursor(token, "Tenant = 'acme'");
    expect(decodeCursor(cursor, "Tenant = 'beta'")).toBeNull();
  });

  it('refuses a truncated or invented cursor', () => {
    const cursor = encodeCursor(token, "Tenant = 'acme'");
    expect(decodeCursor(cursor.slice(0, -3), "Tenant = 'acme'")).toBeNull();
    expect(decodeCursor('abcd', "Tenant = 'acme'")).toBeNull();
  });
});
