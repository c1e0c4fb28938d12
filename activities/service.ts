// The generic service activity: one declared keyed HTTP call (a step or a compensation of
// a definition that has no code of its own). The workflow hands it the service's name, the
// method, the path and the body; the base URL is the worker's configuration for that
// service, so a URL never enters history. The derived key is sent as Idempotency-Key and,
// where the path says `{key}`, in the path.
import type { HttpMethod } from '../workflows/definition.js';
import { DownstreamUnavailableError } from './errors.js';
import { callDownstream, expectSuccess, expectUndone, keyedPath } from './http.js';

export interface ServiceCall {
  service: string;
  method: HttpMethod;
  path: string;
  body?: Record<string, unknown>;
}

export interface ServiceCallOptions {
  /** Base URL of each service a declared call may name. */
  urls: ReadonlyMap<string, string>;
  timeoutMs: number;
}

/** The answer as a step reads it: the body's fields, and whether the downstream replayed it. */
export type ServiceAnswer = Record<string, unknown> & { replayed: boolean };

export async function callService(
  opts: ServiceCallOptions,
  downstreamKey: string,
  call: ServiceCall,
  { compensation }: { compensation: boolean },
): Promise<ServiceAnswer> {
  const baseUrl = opts.urls.get(call.service);
  // Retried, not failed for good: a worker that knows the service may take the next attempt.
  if (!baseUrl) throw new DownstreamUnavailableError(`no base URL for service ${call.service} on this worker`);
  const answer = await callDownstream({ baseUrl, timeoutMs: opts.timeoutMs }, call.method, keyedPath(call.path, downstreamKey), {
    idempotencyKey: downstreamKey,
    body: call.body ?? {},
  });
  const { body, replayed } = (compensation ? expectUndone : expectSuccess)(call.service, answer);
  return { ...body, replayed };
}
