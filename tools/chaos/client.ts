// The clients of a chaos run. Each logical operation is sent by one or more clients that
// behave as a careful payments client must: retry with the SAME key and body on a network
// error, a 5xx or a 202, through either API instance, until the outcome is terminal. Some
// operations are re-sent after their outcome (a late retry) and some with a changed
// amount (which must be refused with 422), and some are cancelled at a random moment
// (POST …/cancel: 202 while processing, 409 once finished). A refusal for load (429, or
// 503 engine_busy) is retried no sooner than its Retry-After, with the same key, and so is
// a 408 (the instance did not receive the request in time: nothing started). What they
// see is recorded (records.ts), so the auditor can check that all agree.
import { setTimeout as sleep } from 'node:timers/promises';
import { canonicalJson } from '../../common/http/fingerprint.js';
import type { PlannedOp } from './plan.js';
import { createRng, type Rng } from './prng.js';
import { isTerminal, outcomeSignature, type ClientContext, type OpRecord } from './records.js';
import { backoff, call, check429, check5xx, get, other, post, problemCode, retryAfterMs, unlessRetried } from './requests.js';

/** Share of operations a client cancels at a random moment after sending them. */
const CANCEL_RATE = 0.15;

function recordTerminal(rec: OpRecord, operation: Record<string, unknown>, via: string): void {
  rec.terminal = operation;
  rec.outcomes.push({ via, signature: outcomeSignature(operation) });
}

/**
 * A 200 or 202 with an operation resource, checked against the contract: true when it is
 * terminal (recorded); otherwise the client waits a little (less than Retry-After: it is
 * impatient) before asking again.
 */
async function accepted(
  ctx: ClientContext,
  rec: OpRecord,
  ans: { status: number; headers: Headers; body: Record<string, unknown> },
  api: 0 | 1,
  viaGet: boolean,
  rng: Rng,
  onAccepted: () => void,
): Promise<boolean> {
  const { op } = rec;
  rec.accepted = true;
  rec.acceptedAt ??= Date.now();
  onAccepted();
  const flag = (rule: string, message: string) => ctx.violations.push({ rule, key: op.key, message });
  if (isTerminal(ans.body)) {
    if (ans.status !== 200)
      flag('API: 202 only while processing', `api-${api} answered 202 for a ${String(ans.body.status)} operation`);
    recordTerminal(rec, ans.body, `api-${api} ${viaGet ? 'GET' : 'POST'}`);
    return true;
  }
  if (ans.status === 200 && !viaGet)
    flag('API: 200 only when finished', `api-${api} answered 200 to a POST for a processing operation`);
  if (ans.status === 202 && (!ans.headers.get('location') || !ans.headers.get('retry-after')))
    flag('API: 202 carries Location and Retry-After', `api-${api} answered 202 without them`);
  await sleep(Math.min(Number(ans.headers.get('retry-after') ?? '1') * 1000, rng.int(200, 1_500)));
  return false;
}

/** One client: sends the operation and retries with the same key until it is terminal. */
async function clientLoop(ctx: ClientContext, rec: OpRecord, rng: Rng, firstApi: 0 | 1, onAccepted: () => void): Promise<void> {
  const { op } = rec;
  let [api, viaGet, failures] = [firstApi, false, 0];
  /** Backs off, then (with probability `switching`) through the other instance, with a POST. */
  const retry = async (ms: number, switching = 1) => {
    await sleep(ms);
    if (switching >= 1 || rng.chance(switching)) api = other(api);
    viaGet = false;
  };
  for (let attempt = 0; Date.now() < ctx.deadline; attempt++) {
    if (attempt > 0) ctx.stats.retries++;
    rec.requests++;
    const ans = viaGet ? await get(ctx, api, op) : await post(ctx, api, op, op.body, rng);
    if ('networkError' in ans) {
      await retry(backoff(rng, failures++, null), 0.7);
      continue;
    }
    if ((ans.status === 200 || ans.status === 202) && typeof ans.body.status === 'string') {
      failures = 0;
      if (await accepted(ctx, rec, ans, api, viaGet, rng, onAccepted)) return;
      viaGet = rng.chance(op.getAfter202);
      if (rng.chance(0.5)) api = other(api);
    } else if (ans.status >= 500) {
      check5xx(ctx, op, api, ans);
      await retry(backoff(rng, failures++, ans.headers.get('retry-after')));
    } else if (ans.status === 408) {
      // The instance did not receive the whole request in time (a client, or a process,
      // starved of CPU): nothing was started, so the same request again is safe.
      ctx.stats.requestTimeouts++;
      await retry(backoff(rng, failures++, null));
    } else if (ans.status === 429) {
      // The tenant's rate is spent, whichever instance it asks: come back when it says.
      check429(ctx, op, api, ans);
      await retry(Math.max(retryAfterMs(ans.headers.get('retry-after')), 250) * (1 + 0.25 * rng.next()), 0.5);
    } else if (ans.status === 404 && viaGet) {
      // Only ever asked after a 202: the operation exists and must be found.
      ctx.violations.push({ rule: 'I5 nothing lost', key: op.key, message: `api-${api} answered 404 for an accepted operation` });
      viaGet = false;
    } else {
      const code = problemCode(ans.body);
      ctx.violations.push({
        rule: ans.status === 422 ? 'API: a retry with the same body is a replay' : 'API: unexpected answer',
        key: op.key,
        message: `api-${api} answered ${ans.status} ${code ?? JSON.stringify(ans.body).slice(0, 120)} to the original request`,
      });
      return;
    }
  }
  rec.timedOut = true;
}

/** The same key with a changed amount, once the operation was accepted: must be 422. */
async function sendChanged(ctx: ClientContext, rec: OpRecord, rng: Rng): Promise<void> {
  const { op } = rec;
  const changed = { ...op.body, amount: Number(op.body.amount) + op.changedAmount!.delta };
  let api: 0 | 1 = rng.chance(0.5) ? 0 : 1;
  ctx.stats.changedAmountSent++;
  for (let failures = 0; Date.now() < ctx.deadline; failures++) {
    const ans = await unlessRetried(ctx, op, api, rng, failures, await post(ctx, api, op, changed, rng));
    if (!ans) {
      api = other(api);
      continue;
    }
    const code = problemCode(ans.body);
    rec.changedAmount = { status: ans.status, code, differences: ans.body.differences };
    if (ans.status === 422) ctx.stats.got422++;
    if (ans.status !== 422 || code !== 'idempotency_key_reused') {
      ctx.violations.push({
        rule: 'API: same key, other amount is 422',
        key: op.key,
        message: `the amount changed by ${op.changedAmount!.delta} got ${ans.status} ${code ?? String(ans.body.status ?? '')} from api-${api}`,
      });
    } else if (canonicalJson(ans.body.differences ?? null) !== canonicalJson(['amount'])) {
      ctx.violations.push({
        rule: 'API: 422 names the differing fields',
        key: op.key,
        message: `differences ${canonicalJson(ans.body.differences ?? null)}, expected ["amount"]`,
      });
    }
    return;
  }
  rec.changedAmount = { status: 'network' };
}

/** The same request after the outcome is known: the same outcome, marked as a replay. */
async function lateReplay(ctx: ClientContext, rec: OpRecord, rng: Rng): Promise<void> {
  const { op } = rec;
  let api: 0 | 1 = rng.chance(0.5) ? 0 : 1;
  ctx.stats.lateReplays++;
  for (let failures = 0; Date.now() < ctx.deadline; failures++) {
    rec.requests++;
    const ans = await unlessRetried(ctx, op, api, rng, failures, await post(ctx, api, op, op.body, rng));
    if (!ans) {
      api = other(api);
      continue;
    }
    if (ans.status !== 200 || !isTerminal(ans.body)) {
      ctx.violations.push({
        rule: 'I4 same outcome',
        key: op.key,
        message: `a late retry through api-${api} got ${ans.status} ${String(ans.body.status ?? ans.body.code)}`,
      });
      return;
    }
    if (ans.headers.get('idempotent-replayed') === 'true') ctx.stats.replayHeader.true++;
    else {
      ctx.stats.replayHeader.missing++;
      ctx.violations.push({
        rule: 'API: a replay says Idempotent-Replayed',
        key: op.key,
        message: `late retry through api-${api} without Idempotent-Replayed: true`,
      });
    }
    recordTerminal(rec, ans.body, `api-${api} late retry`);
    return;
  }
}

/**
 * Cancels the operation once it was accepted, after a random delay (so cancels land before,
 * during and after its steps). Retried on a network error or a 5xx like any request; a
 * 404 is possible only if the cancel overtook the start, so it waits and tries again.
 */
async function sendCancel(ctx: ClientContext, rec: OpRecord, rng: Rng, afterMs: number): Promise<void> {
  const { op } = rec;
  await sleep(afterMs);
  let api: 0 | 1 = rng.chance(0.5) ? 0 : 1;
  const path = `/v1/operations/${encodeURIComponent(op.key)}/cancel`;
  let unanswered = 0;
  for (let failures = 0; Date.now() < ctx.deadline; failures++) {
    const ans = await unlessRetried(ctx, op, api, rng, failures, await call(ctx, api, op, 'POST', path, {}, undefined, 20_000));
    if (!ans) {
      unanswered++;
      api = other(api);
      continue;
    }
    const code = problemCode(ans.body);
    if (ans.status === 404 && code === 'operation_not_found' && !rec.accepted) {
      await sleep(backoff(rng, failures, null));
      continue;
    }
    if (ans.status === 202) {
      const step = typeof ans.body.step === 'string' ? ans.body.step : 'none';
      rec.cancel = { status: 202, step: step === 'none' ? null : step, unanswered };
      ctx.stats.cancelsByStep[step] = (ctx.stats.cancelsByStep[step] ?? 0) + 1;
      if (ans.body.status !== 'processing' || ans.body.cancelRequested !== true || !ans.headers.get('location')) {
        ctx.violations.push({
          rule: 'API: cancel answers 202 with the processing operation',
          key: op.key,
          message: `api-${api} answered 202 with status ${String(ans.body.status)}, cancelRequested ${String(ans.body.cancelRequested)}`,
        });
      }
      return;
    }
    rec.cancel = { status: ans.status, ...(code ? { code } : {}), unanswered };
    if (ans.status === 409 && code === 'operation_already_completed') {
      ctx.stats.cancelsByStep.finished = (ctx.stats.cancelsByStep.finished ?? 0) + 1;
      return;
    }
    ctx.violations.push({
      rule: 'API: cancel answers 202 or 409',
      key: op.key,
      message: `api-${api} answered ${ans.status} ${code ?? ''} to a cancel of an accepted operation`,
    });
    return;
  }
  rec.cancel = { status: 'network', unanswered };
}

/** Runs one logical operation from its first request to its last planned retry. */
export async function runOperation(ctx: ClientContext, op: PlannedOp): Promise<OpRecord> {
  const rec: OpRecord = { op, accepted: false, outcomes: [], requests: 0, timedOut: false };
  const rng = createRng(op.clientSeed);
  let signalAccepted: (accepted: boolean) => void = () => undefined;
  const accepted = new Promise<boolean>((resolve) => (signalAccepted = resolve));
  ctx.stats.concurrentClients += op.concurrency - 1;
  const loops = Promise.all(
    Array.from({ length: op.concurrency }, (_, i) =>
      clientLoop(ctx, rec, rng.fork(`client-${i}`), ((op.firstApi + i) % 2) as 0 | 1, () => signalAccepted(true)),
    ),
  );
  const changed = op.changedAmount
    ? (async () => {
        if (!(await Promise.race([accepted, loops.then(() => rec.accepted)]))) return;
        await sleep(op.changedAmount!.afterMs);
        await sendChanged(ctx, rec, rng.fork('changed'));
      })()
    : Promise.resolve();
  // Decided from the operation's own seed, so a replay of the run cancels the same ones.
  const cancelRng = rng.fork('cancel');
  const cancelled =
    !op.flood && cancelRng.chance(CANCEL_RATE)
      ? (async () => {
          if (!(await Promise.race([accepted, loops.then(() => rec.accepted)]))) return;
          await sendCancel(ctx, rec, cancelRng, cancelRng.int(0, 3_000));
        })()
      : Promise.resolve();
  await loops;
  await cancelled;
  if (rec.terminal) {
    const replayRng = rng.fork('late');
    for (const delay of op.lateReplaysMs) {
      await sleep(delay);
      await lateReplay(ctx, rec, replayRng);
    }
  }
  await changed;
  return rec;
}
