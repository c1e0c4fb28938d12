// `npm run demo`: the seed scenario told step by step against the local stack. The bank
// is told to lose every first answer; the payment still charges once, a retry from the
// caller replays it, a changed amount under the same key is refused, and a declined
// checkout gives its hold back. Every claim printed is checked against the bank's and
// the reservation service's own records; a claim that does not hold ends the demo with 4.
import { randomUUID } from 'node:crypto';
import {
  ApiError,
  createClient,
  IdempotencyConflictError,
  OperationFailedError,
  type Operation,
  type OperationResult,
  type RetryEvent,
} from '../../client/lib/index.js';
import { EXIT, type ExitCode } from '../../client/cli/exit-codes.js';

export interface DemoOpts {
  apiUrl: string;
  apiKey?: string;
  bankUrl: string;
  reservationsUrl: string;
  timeout: number;
}

/** A step whose promised effect did not show up in the ledgers. */
class DemoError extends Error {}

/** Something the demo needs is not there; `hint` says how to get it. */
class SetupError extends Error {
  constructor(
    message: string,
    readonly hint: string,
  ) {
    super(message);
  }
}

const ALICE = 'acc_alice';
const BOB = 'acc_bob';
const SKU = 'sku_book';
const START_HINT = 'start the stack in another terminal with: npm start -- --faults';

const say = (line = '') => process.stdout.write(`${line}\n`);
const money = (minor: number, currency = 'EUR') => `${(minor / 100).toFixed(2)} ${currency}`;

type PaymentRequest = { account: string; amount: number; currency: string; description: string };

interface Reply {
  status: number;
  body: Record<string, unknown>;
}

async function http(method: string, url: string, body?: unknown): Promise<Reply> {
  const res = await fetch(url, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(10_000),
  });
  return { status: res.status, body: jsonObject(await res.text()) };
}

/** A reply's JSON, or nothing when it is not JSON (a proxy's error page): its status then says enough. */
function jsonObject(text: string): Record<string, unknown> {
  try {
    return JSON.parse(text) as Record<string, unknown>;
  } catch {
    return {};
  }
}

/** A sandbox read the demo cannot do without; unreachable or refused → SetupError. */
async function read(what: string, url: string): Promise<Record<string, unknown>> {
  let reply: Reply;
  try {
    reply = await http('GET', url);
  } catch {
    throw new SetupError(`cannot reach ${what} at ${new URL(url).origin}`, START_HINT);
  }
  if (reply.status !== 200) {
    throw new SetupError(
      `${what}: GET ${url} answered ${reply.status}`,
      'restart the stack from empty data with: npm start -- --reset --faults',
    );
  }
  return reply.body;
}

function check(condition: boolean, claim: string): void {
  if (!condition) throw new DemoError(claim);
}

/** What a step of the demo is given: the options, the client, the ledgers it reads, and how it numbers its lines. */
interface Demo {
  o: DemoOpts;
  rs: ReturnType<typeof createClient>;
  next: (text: string) => void;
  balance: (account: string) => Promise<number>;
  available: (sku: string) => Promise<number>;
}

/** Before touching anything: is the stack there, with fault injection on? The bank's drop rate as it was found. */
async function preflight(d: Pick<Demo, 'o' | 'balance' | 'available'>): Promise<number> {
  const { o } = d;
  await http('GET', `${o.apiUrl}/healthz`).catch(() => {
    throw new SetupError(`cannot reach the retrysafe API at ${o.apiUrl}`, START_HINT);
  });
  const faults = await http('GET', `${o.bankUrl}/_faults`).catch(() => {
    throw new SetupError(`cannot reach the sandbox bank at ${o.bankUrl}`, START_HINT);
  });
  if (faults.status === 404)
    throw new SetupError(
      `the sandbox bank at ${o.bankUrl} runs without fault injection (GET /_faults is 404)`,
      'stop the stack (Ctrl-C) and restart it with: npm start -- --faults',
    );
  await Promise.all([d.balance(ALICE), d.balance(BOB), d.available(SKU)]);
  return Number(faults.body.dropResponseAfterCommit ?? 0);
}

/** Steps 1–4: a payment through a lost answer, sent twice, charged once; its history in the Web UI. */
async function payTwice({ o, rs, next, balance }: Demo, key: string, payment: PaymentRequest) {
  next('Turning on a fault at the bank: it will make each new charge and then drop the');
  say('   connection before answering (dropResponseAfterCommit: 1). That is the lost response');
  say('   of a real outage: the money moved, but the caller never heard.');
  await setDrop(o.bankUrl, 1);
  say();

  const aliceBefore = await balance(ALICE);
  next(`Paying ${money(payment.amount)} from ${ALICE} with the idempotency key ${key}.`);
  say(`   ${ALICE}'s balance before: ${money(aliceBefore)}`);
  const first = await rs.payments.create(payment, { idempotencyKey: key });
  const chargeKey = downstreamKey(first, 'charge_payment');
  say('   The bank charged and hung up. The worker cannot tell a lost answer from a failed');
  say(`   charge, so it retried with the same downstream key (${chargeKey}),`);
  say('   and the bank answered with the charge it had stored instead of charging again.');
  say(`   → ${first.status}: charge ${first.result?.chargeId}`);
  say();

  next("Your own program can lose the API's answer too (a timeout, a dropped connection).");
  say('   The only safe move is to send the same request again with the same key:');
  const again = await rs.payments.create(payment, { idempotencyKey: key });
  check(again.meta.replayed, 'the retry was expected to be answered with Idempotent-Replayed: true');
  check(again.result?.chargeId === first.result?.chargeId, 'the retry was expected to return the same charge');
  say(`   → Idempotent-Replayed: true, the same charge ${again.result?.chargeId}. Nothing new started.`);
  say();

  const chargePath = `/charges/${encodeURIComponent(chargeKey)}`;
  const charge = await read('the sandbox bank', o.bankUrl + chargePath);
  const aliceAfter = await balance(ALICE);
  next(`What the bank recorded: GET ${o.bankUrl}${chargePath}`);
  say(
    `   one charge, ${String(charge.chargeId)}: ${money(Number(charge.amount), String(charge.currency))}, ${String(charge.status)}`,
  );
  say(
    `   ${ALICE}'s balance: ${money(aliceBefore)} → ${money(aliceAfter)}: charged exactly once, though the bank's answer was lost and the payment was sent twice.`,
  );
  check(charge.chargeId === first.result?.chargeId && charge.status === 'captured', 'the bank should hold one captured charge');
  check(aliceBefore - aliceAfter === payment.amount, `the balance should have moved by ${payment.amount} exactly`);
  say();

  next('The operation in the Temporal Web UI (its history shows the retried bank call):');
  say(`   ${first.links.temporalUi}`);
  say();
  return aliceAfter;
}

/** Step 5: the same key with another amount is refused, and moves nothing. */
async function changedAmount({ rs, next, balance }: Demo, key: string, payment: PaymentRequest, aliceAfter: number) {
  const changed = { ...payment, amount: 1300 };
  next(`The same key with another amount (${money(changed.amount)}) is a different request, not a retry:`);
  try {
    await rs.payments.create(changed, { idempotencyKey: key });
    throw new DemoError('a changed amount under the same key was expected to be refused with 422');
  } catch (error) {
    if (!(error instanceof IdempotencyConflictError)) throw error;
    say(`   → 422 ${error.code}, differences: ${JSON.stringify(error.differences)}`);
    check(error.differences.includes('amount'), 'the 422 should name the amount');
  }
  const aliceNow = await balance(ALICE);
  check(aliceNow === aliceAfter, 'the refused request must not move money');
  say(`   Nothing was charged: ${ALICE}'s balance is still ${money(aliceNow)}.`);
  say();
}

/** Step 6: a checkout Bob cannot pay gives its hold back. */
async function declinedCheckout({ o, rs, next, balance, available }: Demo, key: string) {
  const bob = await balance(BOB);
  const stockBefore = await available(SKU);
  // More than Bob has, whatever earlier runs left him: the decline is the point.
  const amount = Math.max(4200, bob + 100);
  next(`A checkout for ${BOB} (balance ${money(bob)}): 2 × ${SKU} for ${money(amount)}, more than he has.`);
  say(`   ${SKU} available before: ${stockBefore}. The saga holds the books, then charges, then confirms.`);
  let declined: OperationFailedError | undefined;
  try {
    await rs.checkouts.create(
      { account: BOB, amount, currency: 'EUR', items: [{ sku: SKU, quantity: 2 }] },
      { idempotencyKey: `${key}-checkout` },
    );
  } catch (error) {
    if (!(error instanceof OperationFailedError)) throw error;
    declined = error;
  }
  if (declined === undefined) throw new DemoError(`the checkout for ${BOB} was expected to be declined`);
  say(`   → failed: ${declined.code} (${declined.operation.error.message})`);
  say(`   compensations: ${JSON.stringify(declined.compensations)}`);
  const reserveKey = downstreamKey(declined.operation, 'reserve_items');
  const hold = await read('the reservation service', `${o.reservationsUrl}/reservations/${encodeURIComponent(reserveKey)}`);
  const stockAfter = await available(SKU);
  say(
    `   ${SKU} available after: ${stockAfter} (the hold ${reserveKey} is ${String(hold.status)}); ${BOB}'s balance: ${money(await balance(BOB))}`,
  );
  check(declined.compensations.includes('release_reservation'), 'the hold should have been released');
  check(stockAfter === stockBefore, `${SKU} should be back at ${stockBefore}`);
  say();
}

export async function runDemo(o: DemoOpts): Promise<ExitCode> {
  const balance = async (account: string) => Number((await read('the sandbox bank', `${o.bankUrl}/accounts/${account}`)).balance);
  const available = async (sku: string) =>
    Number((await read('the reservation service', `${o.reservationsUrl}/inventory/${sku}`)).available);
  say('retrysafe demo: a lost response, retried safely');
  say(`API ${o.apiUrl} · bank ${o.bankUrl} · reservations ${o.reservationsUrl}`);
  say();
  let previousDrop = 0;
  try {
    previousDrop = await preflight({ o, balance, available });
  } catch (error) {
    return fail(error);
  }
  let step = 0;
  const next = (text: string) => say(`${++step}. ${text}`);
  const rs = createClient({
    baseUrl: o.apiUrl,
    apiKey: o.apiKey,
    timeoutMs: o.timeout,
    onRetry: (e: RetryEvent) =>
      say(
        `   (no usable answer from the API: ${e.error.code}; the client retries in ${(e.delayMs / 1000).toFixed(1)} s with the same key)`,
      ),
  });
  const demo: Demo = { o, rs, next, balance, available };
  const key = `demo-${randomUUID().slice(0, 8)}`;
  const payment = { account: ALICE, amount: 1250, currency: 'EUR', description: 'retrysafe demo' };
  // Ctrl-C while the fault is on would leave the bank losing answers: put it back first.
  const onInterrupt = (signal: NodeJS.Signals) => {
    process.stderr.write('\ninterrupted: turning the fault off again\n');
    void setDrop(o.bankUrl, previousDrop)
      .catch(() => process.stderr.write(`warning: could not reset the bank's faults at ${o.bankUrl}/_faults\n`))
      .finally(() => process.exit(signal === 'SIGINT' ? 130 : 143));
  };
  process.once('SIGINT', onInterrupt);
  process.once('SIGTERM', onInterrupt);
  let failure: unknown;
  try {
    const aliceAfter = await payTwice(demo, key, payment);
    await changedAmount(demo, key, payment, aliceAfter);
    await declinedCheckout(demo, key);
  } catch (error) {
    failure = error;
  } finally {
    process.off('SIGINT', onInterrupt);
    process.off('SIGTERM', onInterrupt);
  }
  // Always, whatever happened above: the stack is left as the demo found it.
  const restored = await restore(o.bankUrl, previousDrop, next);
  if (failure !== undefined) return fail(failure);
  if (!restored) return EXIT.error;
  say();
  say('Done: a payment charged once through a lost answer and a retry, a reused key refused, a declined checkout undone.');
  return EXIT.ok;
}

function downstreamKey(op: Operation | OperationResult, step: string): string {
  const found = op.steps.find((s) => s.name === step);
  if (!found) throw new DemoError(`the operation has no ${step} step`);
  return found.downstreamKey;
}

async function setDrop(bankUrl: string, drop: number): Promise<void> {
  const reply = await http('PUT', `${bankUrl}/_faults`, { dropResponseAfterCommit: drop });
  if (reply.status !== 200)
    throw new SetupError(`PUT ${bankUrl}/_faults answered ${reply.status}`, 'restart the stack with: npm start -- --faults');
}

async function restore(bankUrl: string, drop: number, next: (text: string) => void): Promise<boolean> {
  next(drop === 0 ? 'Turning the fault off again.' : `Putting the fault back as it was (dropResponseAfterCommit: ${drop}).`);
  try {
    await setDrop(bankUrl, drop);
    return true;
  } catch (error) {
    process.stderr.write(
      `warning: could not reset the bank's faults: ${error instanceof Error ? error.message : String(error)}\n`,
    );
    return false;
  }
}

function fail(error: unknown): ExitCode {
  if (error instanceof SetupError) {
    process.stderr.write(`error: ${error.message}\n${error.hint}\n`);
  } else if (error instanceof DemoError) {
    process.stderr.write(`the demo did not go as expected: ${error.message}\n`);
  } else if (error instanceof ApiError && error.status === null) {
    process.stderr.write(`error: ${error.message}\n${START_HINT}\n`);
  } else if (error instanceof Error) {
    process.stderr.write(`error: ${error.message}\n`);
  } else {
    process.stderr.write(`error: ${String(error)}\n`);
  }
  return EXIT.error;
}
