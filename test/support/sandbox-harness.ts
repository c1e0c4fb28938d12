// What the bank's and the reservation service's own test harnesses share: listening on
// 127.0.0.1:0, a fetch-based caller that can send bad keys and raw bodies, and the
// problem-document assertion.
import { expect } from 'vitest';
import type { SandboxApp } from '../../downstream/shared/http.js';

export interface Answer {
  status: number;
  headers: Headers;
  body: Record<string, unknown>;
  text: string;
}

export type Call = (
  method: string,
  path: string,
  opts?: { body?: unknown; raw?: string; key?: string; headers?: Record<string, string> },
) => Promise<Answer>;

/** Listens on a free loopback port; returns the base URL. */
export async function listenOnLoopback(app: SandboxApp): Promise<string> {
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.address();
  if (!address || typeof address === 'string') throw new Error('no TCP address');
  return `http://127.0.0.1:${address.port}`;
}

/** JSON request; `key` sets Idempotency-Key as is, so tests can send bad ones. */
export function caller(url: string): Call {
  return async (method, path, o = {}) => {
    const headers: Record<string, string> = { ...o.headers };
    let payload: string | undefined;
    if (o.raw !== undefined) payload = o.raw;
    else if (o.body !== undefined) payload = JSON.stringify(o.body);
    if (payload !== undefined && !Object.keys(headers).some((h) => h.toLowerCase() === 'content-type')) {
      headers['content-type'] = 'application/json';
    }
    if (o.key !== undefined) headers['idempotency-key'] = o.key;
    const res = await fetch(url + path, { method, headers, ...(payload !== undefined ? { body: payload } : {}) });
    const text = await res.text();
    let body: Record<string, unknown> = {};
    try {
      body = text ? (JSON.parse(text) as Record<string, unknown>) : {};
    } catch {
      body = { unparsed: text };
    }
    return { status: res.status, headers: res.headers, body, text };
  };
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Asserts the answer is a problem document with this status and code; returns its body. */
export function expectProblem(answer: Answer, status: number, code: string): Record<string, unknown> {
  expect({ status: answer.status, code: answer.body.code, text: answer.text }).toMatchObject({ status, code });
  expect(answer.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  expect(answer.body).toMatchObject({
    type: expect.any(String),
    title: expect.any(String),
    status,
    detail: expect.any(String),
    code,
  });
  expect(answer.text).not.toMatch(/stack|\n\s+at /);
  return answer.body;
}
