// The list cursor: Temporal's page token behind a tag bound to the query it was issued for.
// The engine answers a garbled token with a retryable UNKNOWN error (a 503 after the engine
// deadline); the tag turns a truncated cursor, or one reused with other filters or by
// another tenant, into a plain 400 before any call.
import { createHash, timingSafeEqual } from 'node:crypto';

const TAG_BYTES = 8;

function tag(token: Buffer, query: string): Buffer {
  return createHash('sha256').update(query).update('\n').update(token).digest().subarray(0, TAG_BYTES);
}

export function encodeCursor(token: Buffer, query: string): string {
  return Buffer.concat([tag(token, query), token]).toString('base64url');
}

/** The page token, or null when the cursor was not made for this query. */
export function decodeCursor(cursor: string, query: string): Buffer | null {
  const raw = Buffer.from(cursor, 'base64url');
  if (raw.length <= TAG_BYTES) return null;
  const token = raw.subarray(TAG_BYTES);
  return timingSafeEqual(raw.subarray(0, TAG_BYTES), tag(token, query)) ? token : null;
}
