// The routes every keyed service has, and how they answer: the keyed POST that makes an
// effect once per Idempotency-Key, the read of what was done under a key, and the answer
// of an action by key (a reversal, a cancel, a confirm) that a fault may lose after its
// commit. The bank, the reservation service and the example shipping service differ only
// in their ledgers.
import type { Static, TSchema } from 'typebox';
import { Problem, sendProblem } from '../../common/http/problem.js';
import { killConnection, type FaultInjector } from './faults.js';
import type { SandboxApp } from './http.js';
import { idempotencyKeyOf, keyFromPath, requireIdempotencyKey } from './idempotency-key.js';
import { sendExecution, type EffectResponse, type IdempotentExecutor } from './idempotency.js';

/** A business refusal as an effect's answer: a problem document, stored and replayed like a success. */
export function refusal(status: number, code: string, detail: string, extensions: Record<string, unknown> = {}): EffectResponse {
  return { status, body: new Problem(status, code, detail, { extensions }).body() };
}

/**
 * The answer to an effect whose key was fenced: its undo (`reversed`, `released`) arrived
 * first, so it will never be made (`executed`, `held`) under this key.
 */
export function fencedRefusal(noun: string, undone: string, never: string): EffectResponse {
  return refusal(
    410,
    `${noun}_fenced`,
    `this ${noun} was ${undone} before it arrived; it will never be ${never}. Use a new key for a new ${noun}`,
  );
}

/**
 * `POST <path>` with an Idempotency-Key: the effect runs once per key, inside the key's
 * transaction, and its answer is stored and replayed. `request` gives the request as it is
 * fingerprinted and stored (defaults spelled out); the body as validated by default.
 */
export function registerKeyedEffect<S extends TSchema, R = Static<S>>(
  app: SandboxApp,
  { executor, faults }: { executor: IdempotentExecutor; faults: FaultInjector },
  route: {
    path: string;
    schemas: { body: S; created: TSchema };
    request?: (body: Static<S>) => R;
    effect(key: string, request: R, claimedAt: number): EffectResponse;
  },
): void {
  const requestOf = route.request ?? ((body: Static<S>) => body as R);
  app.post(
    route.path,
    {
      onRequest: faults.downHook,
      preValidation: requireIdempotencyKey,
      schema: { body: route.schemas.body, response: { 201: route.schemas.created } },
    },
    async (request, reply) => {
      const key = idempotencyKeyOf(request);
      const body = requestOf(request.body as Static<S>);
      const execution = await executor.execute({
        key,
        endpoint: `POST ${route.path}`,
        body,
        effect: (claimedAt) => route.effect(key, body, claimedAt),
        beforeCommit: () => faults.beforeCommit(request.log),
        afterCommit: () => faults.afterCommit(request.log, { key }),
      });
      return sendExecution(request, reply, execution, faults);
    },
  );
}

/**
 * `GET <prefix><key>`: what was done under a key, for auditors; never faulted. Keys hold
 * `/` (`acme/order-42/charge`), so the key is read from the raw path, encoded or not.
 */
export function registerKeyedRead(
  app: SandboxApp,
  route: { prefix: string; view: TSchema; read(key: string): object | undefined; notFound(key: string): Problem },
): void {
  app.get(`${route.prefix}*`, { schema: { response: { 200: route.view } } }, async (request) => {
    const key = keyFromPath(request.raw.url ?? '', route.prefix);
    const found = key === undefined ? undefined : route.read(key);
    if (!found) throw route.notFound(key ?? '');
    return found;
  });
}

/** What an action by key did: its answer (a refusal as a problem), and whether it committed a change. */
export interface ActionOutcome {
  changed: boolean;
  answer: object | Problem;
}

/**
 * `POST <prefix><key><suffix>`: an action on what was done under a key (`/reverse`,
 * `/cancel`, `/confirm`). Not keyed by a header: the path names the entry, and the action
 * is idempotent by the entry's state, so a repeated call finds it done and answers the
 * same. When the action committed a change and the crash or drop fault fires, the answer
 * is lost instead; the retry then answers the same.
 */
export function registerKeyedActions(
  app: SandboxApp,
  faults: FaultInjector,
  route: {
    prefix: string;
    response: TSchema;
    /** By path suffix, tried in order: the action, in a transaction of its own. */
    actions: Record<string, (key: string) => ActionOutcome>;
    /** Refuses a body the actions do not take, before anything is done. */
    checkBody?: (body: unknown) => void;
  },
): void {
  app.post(
    `${route.prefix}*`,
    { onRequest: faults.downHook, schema: { response: { 200: route.response } } },
    async (request, reply) => {
      const url = request.raw.url ?? '';
      let found: { key: string; act: (key: string) => ActionOutcome } | undefined;
      for (const [suffix, act] of Object.entries(route.actions)) {
        const key = keyFromPath(url, route.prefix, suffix);
        if (key !== undefined) {
          found = { key, act };
          break;
        }
      }
      if (!found) throw new Problem(404, 'not_found', `no route for POST ${request.url.split('?')[0]}`);
      route.checkBody?.(request.body);
      await faults.beforeCommit(request.log);
      const { changed, answer } = found.act(found.key);
      const what = { key: found.key };
      if (changed) faults.afterCommit(request.log, what);
      if (changed && faults.dropsResponse(request.log, what)) {
        killConnection(request, reply);
        return reply;
      }
      return answer instanceof Problem ? sendProblem(reply, answer) : reply.code(200).send(answer);
    },
  );
}
