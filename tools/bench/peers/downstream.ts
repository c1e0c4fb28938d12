// The sandbox bank and reservation service as both peers call them: JSON over fetch, a
// timeout per attempt, the step's derived key in Idempotency-Key. A call ends in one of
// three ways: a value; a refusal (final: a business outcome, or a key that can never
// succeed, such as a fenced one); or a thrown error for anything else (timeout, reset,
// 5xx, 409 while the same key is in flight), which the engine retries with the same key.
import { BUSINESS_CODES } from './contract.js';

/** Refusals that are not business outcomes but can never succeed on a retry either. */
const FINAL_CODES = new Set([
  'charge_fenced',
  'reservation_fenced',
  'reservation_released',
  'reservation_declined',
  'idempotency_key_reused',
]);

export class DownstreamRefusal extends Error {
  override name = 'DownstreamRefusal';
  constructor(
    readonly code: string,
    readonly business: boolean,
    message: string,
  ) {
    super(message);
  }
}

/**
 * The refusal behind `err`, or undefined. Duck-typed rather than instanceof: an engine
 * that stores a step's error and revives it after a restart hands back a plain Error
 * carrying the same fields.
 */
export function refusalOf(err: unknown): { code: string; business: boolean; message: string } | undefined {
  const e = err as { name?: unknown; code?: unknown; business?: unknown; message?: unknown } | null;
  if (e?.name !== 'DownstreamRefusal' || typeof e.code !== 'string') return undefined;
  return { code: e.code, business: e.business === true, message: String(e.message) };
}

export interface SandboxUrls {
  bankUrl: string;
  reservationsUrl: string;
  /** Timeout of one HTTP attempt; the engine's retries span longer. */
  timeoutMs: number;
}

interface Answer {
  status: number;
  body: Record<string, unknown>;
}

async function call(url: string, timeoutMs: number, body: unknown, idempotencyKey?: string): Promise<Answer> {
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json' };
  if (idempotencyKey !== undefined) headers['idempotency-key'] = idempotencyKey;
  const res = await fetch(url, { method: 'POST', headers, body: JSON.stringify(body), signal: AbortSignal.timeout(timeoutMs) });
  const text = await res.text();
  let parsed: Record<string, unknown> = {};
  try {
    parsed = text ? (JSON.parse(text) as Record<string, unknown>) : {};
  } catch {
    // not JSON (a proxy's error page): treated as transient below
  }
  return { status: res.status, body: parsed };
}

/** Throws the refusal an answer carries, or a transient error for anything unexpected. */
function refuse(service: string, answer: Answer): never {
  const code = typeof answer.body.code === 'string' ? answer.body.code : undefined;
  const detail = `${service} answered ${answer.status}${code ? ` ${code}` : ''}${answer.body.detail ? `: ${String(answer.body.detail)}` : ''}`;
  if (code && BUSINESS_CODES.has(code)) throw new DownstreamRefusal(code, true, detail);
  if (code && FINAL_CODES.has(code)) throw new DownstreamRefusal(code, false, detail);
  throw new Error(detail);
}

const path = (key: string) => encodeURIComponent(key);

export function sandboxClients({ bankUrl, reservationsUrl, timeoutMs }: SandboxUrls) {
  return {
    async hold(
      key: string,
      items: Array<{ sku: string; quantity: number }>,
      ttlSeconds: number,
    ): Promise<{ reservationId: string }> {
      const answer = await call(`${reservationsUrl}/reservations`, timeoutMs, { items, ttlSeconds }, key);
      if (answer.status === 200 || answer.status === 201) return { reservationId: String(answer.body.id) };
      return refuse('reservations', answer);
    },
    async confirm(key: string): Promise<void> {
      const answer = await call(`${reservationsUrl}/reservations/${path(key)}/confirm`, timeoutMs, {});
      if (answer.status !== 200) refuse('reservations', answer);
    },
    /** Safe whether or not the hold exists: an absent one leaves a tombstone. */
    async release(key: string): Promise<void> {
      const answer = await call(`${reservationsUrl}/reservations/${path(key)}/release`, timeoutMs, {});
      if (answer.status !== 200) throw new Error(`reservations answered ${answer.status} to a release`);
    },
    async charge(key: string, request: { account: string; amount: number; currency: string }): Promise<{ chargeId: string }> {
      const answer = await call(`${bankUrl}/charges`, timeoutMs, request, key);
      if (answer.status === 200 || answer.status === 201) return { chargeId: String(answer.body.id) };
      return refuse('bank', answer);
    },
    /** Safe whether or not the charge exists: an absent one leaves a tombstone. */
    async reverse(key: string): Promise<void> {
      const answer = await call(`${bankUrl}/charges/${path(key)}/reverse`, timeoutMs, {});
      if (answer.status !== 200) throw new Error(`bank answered ${answer.status} to a reversal`);
    },
  };
}

export type SandboxClients = ReturnType<typeof sandboxClients>;

/** The sandboxes' addresses from the environment every peer service is started with. */
export function sandboxUrlsFromEnv(env: Record<string, string | undefined> = process.env): SandboxUrls {
  const need = (name: string) => {
    const value = env[name];
    if (!value) throw new Error(`${name} is not set`);
    return value.replace(/\/+$/, '');
  };
  const timeoutMs = Number(env.DOWNSTREAM_TIMEOUT_MS ?? 5_000);
  if (!Number.isInteger(timeoutMs) || timeoutMs <= 0) throw new Error('DOWNSTREAM_TIMEOUT_MS must be a positive integer (ms)');
  return { bankUrl: need('BANK_URL'), reservationsUrl: need('RESERVATIONS_URL'), timeoutMs };
}
