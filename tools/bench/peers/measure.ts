// A quick, bounded measurement of one peer, with the bench's own client and load loop:
//
//   npx tsx tools/bench/peers/measure.ts --peer restate|dbos [--requests 100] [--seconds 20]
//        [--concurrency 32] [--data-root .data] [--keep]
//
// It starts the sandbox bank and reservation service and the peer on free loopback ports
// (data under <data-root>/peers-<peer>-<time>, removed at the end unless --keep; the
// default is on disk like the bench's, /dev/shm shows what the disk's fsyncs cost), then
// measures a baseline (one keyed charge straight to the bank, one SQLite commit), then
// checkout latency at concurrency 1, throughput at --concurrency for --seconds, and replay
// latency (the same keys again), checks that every checkout charged once, took its stock
// once and replays to the same chargeId, and runs acc_bob's declined checkout (its hold
// must be released). It prints a table and one JSON line, and stops everything.
import { rmSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { httpClient, type HttpClient } from '../http.js';
import { closedLoop, type BatchResult } from '../load.js';
import { treeCpuMs } from '../proc.js';
import { summarize } from '../stats.js';
import { checkoutKeys, operationId } from './contract.js';
import { PEER_NAMES, PEERS_DIR, type PeerName } from './index.js';
import { startLocal, type LocalPeer } from './local.js';

const ROOT = join(PEERS_DIR, '..', '..');
const ACCOUNT = 'acc_alice';
const SKU = 'sku_book';
const AMOUNT = 100;
const BALANCE = 1_000_000_000;
const STOCK = 1_000_000;

interface Outcome {
  status?: string;
  result?: { chargeId?: string; reservationId?: string };
  error?: { code?: string; compensations?: string[] };
}

async function checkout(http: HttpClient, url: string, key: string, body: unknown): Promise<Outcome> {
  const res = await http.send('POST', url, {
    headers: { 'content-type': 'application/json', 'idempotency-key': key },
    body: JSON.stringify(body),
  });
  if (res.status !== 200) throw new Error(`POST ${url} (${key}) → ${res.status} ${res.text.slice(0, 300)}`);
  return JSON.parse(res.text) as Outcome;
}

/** CPU time used so far by each named process tree, in ms (Linux /proc; 0 elsewhere). */
function cpuByProcess(processes: { name: string; pid: number }[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const p of processes) out[p.name] = treeCpuMs(p.pid) ?? 0;
  return out;
}

async function getJson<T>(http: HttpClient, url: string): Promise<T> {
  const res = await http.json<T>('GET', url);
  if (res.status !== 200) throw new Error(`GET ${url} → ${res.status}`);
  return res.body;
}

async function run(): Promise<void> {
  const { values } = parseArgs({
    options: {
      peer: { type: 'string' },
      requests: { type: 'string', default: '100' },
      seconds: { type: 'string', default: '20' },
      concurrency: { type: 'string', default: '32' },
      'data-root': { type: 'string', default: join(ROOT, '.data') },
      keep: { type: 'boolean', default: false },
    },
  });
  const peer = values.peer as PeerName;
  if (!PEER_NAMES.includes(peer)) throw new Error(`--peer must be one of ${PEER_NAMES.join(', ')}`);
  const requests = Number(values.requests);
  const seconds = Number(values.seconds);
  const concurrency = Number(values.concurrency);

  const dataDir = join(values['data-root'], `peers-${peer}-${Date.now()}`);
  const http = httpClient(concurrency + 4, 90_000);
  const log = (line: string) => console.log(`[${new Date().toISOString().slice(11, 19)}] ${line}`);
  let local: LocalPeer | undefined;
  try {
    let baseline: BatchResult | undefined;
    const t0 = Date.now();
    local = await startLocal(peer, {
      dataDir,
      onSandboxesReady: async ({ bank, reservations }) => {
        // The demo seed is too small for thousands of checkouts; the set-up endpoints top it up.
        await http.json('POST', `${bank}/accounts`, { id: ACCOUNT, currency: 'EUR', balance: BALANCE });
        await http.json('PUT', `${reservations}/inventory/${SKU}`, { available: STOCK });
        // This machine at this moment, before the peer starts: one keyed charge straight to the bank.
        await http.json('POST', `${bank}/accounts`, { id: 'acc_baseline', currency: 'EUR', balance: BALANCE });
        const stamp = Date.now();
        baseline = await closedLoop(50, 1, async (i) => {
          const res = await http.send('POST', `${bank}/charges`, {
            headers: { 'content-type': 'application/json', 'idempotency-key': `baseline-${stamp}-${i}` },
            body: JSON.stringify({ account: 'acc_baseline', amount: 1, currency: 'EUR' }),
          });
          if (res.status !== 201) throw new Error(`baseline charge → ${res.status}`);
        });
      },
    });
    const { stack, bank, reservations } = local;
    log(`${peer} and the sandboxes ready in ${Date.now() - t0} ms; durability: ${stack.durability.join('; ')}`);

    const body = { account: ACCOUNT, amount: AMOUNT, currency: 'EUR', items: [{ sku: SKU, quantity: 1 }] };
    const run = `${peer}-${Date.now()}`;
    const charged = new Map<string, string>();
    const op = (phase: string) => async (i: number) => {
      const key = `${run}-${phase}-${i}`;
      const outcome = await checkout(http, stack.checkoutUrl, key, body);
      if (outcome.status !== 'succeeded' || !outcome.result?.chargeId) throw new Error(`${key}: ${JSON.stringify(outcome)}`);
      charged.set(key, outcome.result.chargeId);
    };

    const warm = await closedLoop(40, 4, op('warm'), 60_000);
    log(`warm-up: ${warm.ok} ok, ${warm.errors.length} errors`);
    const c1 = await closedLoop(requests, 1, op('c1'), 120_000);
    const cpuBefore = cpuByProcess(local.processes);
    const cN = await closedLoop(1_000_000, concurrency, op(`c${concurrency}`), seconds * 1000);
    const cpuAfter = cpuByProcess(local.processes);
    // CPU per checkout barely depends on how busy the machine is, unlike latency.
    const cpuPerCheckout = Object.fromEntries(
      Object.keys(cpuAfter).map((name) => [name, (cpuAfter[name]! - (cpuBefore[name] ?? 0)) / Math.max(1, cN.ok)]),
    );
    const cpuTotal = Object.values(cpuPerCheckout).reduce((a, b) => a + b, 0);
    const replayKeys = [...charged.keys()].filter((k) => k.includes('-c1-')).slice(0, requests);
    let replayMismatches = 0;
    const replay = await closedLoop(replayKeys.length, 1, async (i) => {
      const key = replayKeys[i]!;
      const outcome = await checkout(http, stack.checkoutUrl, key, body);
      if (outcome.result?.chargeId !== charged.get(key)) replayMismatches++;
    });

    // Eight concurrent requests under one new key: one checkout, one outcome for all.
    const dupKey = `${run}-dup`;
    const dups = await Promise.all(Array.from({ length: 8 }, () => checkout(http, stack.checkoutUrl, dupKey, body)));
    const dupCharges = new Set(dups.map((d) => d.result?.chargeId));
    if (dups[0]?.result?.chargeId) charged.set(dupKey, dups[0].result.chargeId);

    // Correctness: one charge and one unit of stock per checkout, nothing left on hold.
    const account = await getJson<{ balance: number }>(http, `${bank}/accounts/${ACCOUNT}`);
    const stock = await getJson<{ available: number; held: number }>(http, `${reservations}/inventory/${SKU}`);
    const checkouts = charged.size;
    const balanceDelta = BALANCE - account.balance;
    const stockDelta = STOCK - stock.available;
    const sample = [...charged.entries()].slice(-5);
    for (const [key, chargeId] of sample) {
      const charge = await getJson<{ chargeId: string; status: string }>(
        http,
        `${bank}/charges/${encodeURIComponent(checkoutKeys(operationId(key)).charge)}`,
      );
      if (charge.chargeId !== chargeId || charge.status !== 'captured')
        throw new Error(`${key}: the bank holds ${JSON.stringify(charge)}`);
    }

    // A declined checkout: acc_bob (2000) cannot pay 4200; the hold must be given back.
    const bobKey = `${run}-bob`;
    const before = await getJson<{ available: number }>(http, `${reservations}/inventory/${SKU}`);
    const bob = await checkout(http, stack.checkoutUrl, bobKey, {
      ...body,
      account: 'acc_bob',
      amount: 4200,
      items: [{ sku: SKU, quantity: 2 }],
    });
    const after = await getJson<{ available: number; held: number }>(http, `${reservations}/inventory/${SKU}`);
    const bobAccount = await getJson<{ balance: number }>(http, `${bank}/accounts/acc_bob`);
    const bobHold = await getJson<{ status: string }>(
      http,
      `${reservations}/reservations/${encodeURIComponent(checkoutKeys(operationId(bobKey)).reserve)}`,
    );
    const bobReplay = await checkout(http, stack.checkoutUrl, bobKey, {
      ...body,
      account: 'acc_bob',
      amount: 4200,
      items: [{ sku: SKU, quantity: 2 }],
    });

    const base = summarize(baseline?.latenciesMs ?? []);
    const lat1 = summarize(c1.latenciesMs);
    const latR = summarize(replay.latenciesMs);
    const throughput = (cN.ok / cN.wallMs) * 1000;
    const checks = {
      errors: warm.errors.length + c1.errors.length + cN.errors.length + replay.errors.length,
      chargedOnce: balanceDelta === checkouts * AMOUNT,
      stockOnce: stockDelta === checkouts && stock.held === 0,
      replaysSameCharge: replayMismatches === 0 && replay.ok === replayKeys.length,
      concurrentDuplicatesOneCharge: dupCharges.size === 1 && dups.every((d) => d.status === 'succeeded'),
      declinedReleased:
        bob.status === 'failed' &&
        bob.error?.code === 'insufficient_funds' &&
        JSON.stringify(bob.error.compensations) === '["release_reservation"]' &&
        after.available === before.available &&
        after.held === 0 &&
        bobAccount.balance === 2000 &&
        bobHold.status === 'released' &&
        JSON.stringify(bobReplay) === JSON.stringify(bob),
    };
    const f = (n: number) => n.toFixed(1);
    console.log(`
${peer}: checkout (reserve_items → charge_payment → confirm_reservation), data in ${values['data-root']}
  machine        load average at the end ${loadavg()
    .map((l) => l.toFixed(1))
    .join(' ')} (2 cores: above 2, every number here waits for a core)
  baseline       one keyed bank charge, c=1: p50 ${f(base.p50)} ms  p99 ${f(base.p99)} ms
  c=1            n=${lat1.n}  p50 ${f(lat1.p50)} ms  p95 ${f(lat1.p95)} ms  p99 ${f(lat1.p99)} ms  max ${f(lat1.max)} ms
  c=${concurrency}           ${cN.ok} checkouts in ${f(cN.wallMs / 1000)} s = ${f(throughput)}/s  (errors ${cN.errors.length})
  CPU/checkout   ${f(cpuTotal)} ms at c=${concurrency}: ${Object.entries(cpuPerCheckout)
    .map(([k, v]) => `${k} ${f(v)}`)
    .join(', ')}
  replay c=1     n=${latR.n}  p50 ${f(latR.p50)} ms  p99 ${f(latR.p99)} ms
  correctness    ${checkouts} checkouts: bank −${balanceDelta} (expected −${checkouts * AMOUNT}), stock −${stockDelta}, held ${stock.held}, replay mismatches ${replayMismatches}
  acc_bob 4200   ${bob.status} ${bob.error?.code} compensations ${JSON.stringify(bob.error?.compensations)}; hold ${bobHold.status}; stock ${before.available} → ${after.available}; balance ${bobAccount.balance}
  checks         ${Object.entries(checks)
    .map(([k, v]) => `${k}=${v}`)
    .join(' ')}
`);
    console.log(
      JSON.stringify({
        peer,
        loadavg: loadavg(),
        baseline: base,
        c1: lat1,
        throughput: { concurrency, ok: cN.ok, wallMs: cN.wallMs, perSecond: throughput },
        cpuMsPerCheckout: cpuPerCheckout,
        replay: latR,
        checks,
      }),
    );
    if (checks.errors > 0) console.log(`first errors: ${[...c1.errors, ...cN.errors, ...replay.errors].slice(0, 3).join(' | ')}`);
    const failedChecks = Object.entries(checks).filter(([k, v]) => (k === 'errors' ? v !== 0 : v !== true));
    if (failedChecks.length > 0) process.exitCode = 1;
  } finally {
    http.close();
    await local?.stop();
    if (!values.keep) rmSync(dataDir, { recursive: true, force: true });
    else log(`data kept in ${dataDir}`);
  }
}

run().catch((err) => {
  console.error(err);
  process.exit(1);
});
