// Section 5: retrysafe's checkout beside the same saga on each peer engine the run raced
// (--peers), new checkouts and replays, and how each peer was set up to be durable.
import { find } from '../results.js';
import type { Kind } from '../scenarios/measure.js';
import type { Section } from './context.js';
import { ms, n1, pct, table } from './format.js';
import { PEER_OPERATION } from '../peers/contract.js';
import { kindRows, label, operationsOf, partLabel } from './kinds.js';

/** The replays of a finished checkout, ours (from the API's cache) first. */
const OUR_REPLAY: Kind = `replay-${PEER_OPERATION}`;

export const peers: Section = ({ r, cs }) => {
  if (!r.peers?.length) return [];
  const out = ['## 5. The peers: the same checkout on Restate and on DBOS Transact', ''];
  out.push(
    "Each peer runs retrysafe's checkout saga (tools/bench/peers: the same request, the same derived keys, compensations " +
      "registered before their step) against this run's bank and reservation service, behind the same HTTP contract " +
      "(POST /v1/checkouts with an Idempotency-Key, answered once the checkout ended). Driven by the bench's own client " +
      "and closed loop, interleaved with retrysafe's checkout batches (ABBA). A peer batch has more checkouts than " +
      "retrysafe's (each takes a fraction of the time), so that its rate can be read. CPU: every process that does the " +
      "checkout's work (the PostgreSQL server with all its backends), the sandboxes included, ÷ checkouts; the driver is not counted.",
  );
  out.push('');
  // A peer's name is its checkout's scenario kind, and `replay-<name>` its replays'.
  const raced = operationsOf(r).find((op) => op.own === PEER_OPERATION);
  // The same work on bare Temporal, when the run measured it, stands beside the engine's floor.
  const fair = raced?.fair && r.scenarios.some((s) => s.kind === raced.fair) ? [raced.fair] : [];
  const systems: Kind[] = [PEER_OPERATION, ...fair, ...(raced ? [raced.bare] : []), ...r.peers.map((p) => p.peer as Kind)];
  out.push(
    table(
      ['system', 'c', 'ops/s', 'p50 / p95 / p99 ms', 'n', 'errors', 'CPU ms/checkout', 'of it'],
      kindRows(r.scenarios, systems, cs, 'c', (s, cpu) => [
        n1(s?.steadyOpsPerSec ?? Number.NaN),
        pct(s),
        s?.ops ?? 0,
        s?.errors ?? 0,
        n1(cpu?.total ?? Number.NaN),
        cpu ? cpu.parts.map(([p, v]) => `${partLabel(p)} ${n1(v)}`).join(' · ') : '',
      ]),
    ),
  );
  out.push('');
  out.push('Replays (a retry of a finished checkout, same key and body):');
  out.push('');
  const replays: Kind[] = [OUR_REPLAY, ...r.peers.map((p) => `replay-${p.peer}` as Kind)];
  out.push(
    table(
      ['system', 'c', 'req/s', 'p50 / p95 / p99 ms', "mean (Little's law) ms", 'n', 'errors'],
      cs.flatMap((c) =>
        replays.map((k) => {
          const s = find(r.scenarios, k, c);
          return [
            label(k),
            c,
            n1(s?.opsPerSec ?? Number.NaN),
            pct(s),
            ms(s?.littleMeanMs ?? Number.NaN),
            s?.ops ?? 0,
            s?.errors ?? 0,
          ];
        }),
      ),
    ),
  );
  out.push('');
  out.push(
    table(
      ['peer', 'versions', 'durability (set, and checked where the engine can be asked)', 'processes'],
      r.peers.map((p) => [
        p.peer,
        Object.entries(p.versions)
          .map(([k, v]) => `${k} ${v}`)
          .join(', '),
        p.durability.join('; '),
        p.processes.join(', '),
      ]),
    ),
  );
  out.push('');
  return out;
};
