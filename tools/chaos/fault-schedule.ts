// The fault schedule of a chaos run, drawn from the seed: per sandbox a track of
// non-overlapping fault windows (what `PUT /_faults` sets while each lasts), and the
// process faults (kills and restarts) spread over the run, by topology.
import type { FaultsPatch } from '../../downstream/shared/faults.js';
import type { Rng } from './prng.js';
import { CHAOS_TIMINGS } from './settings.js';
import type { Service } from './vocabulary.js';

export type SandboxFaultKind = 'drop' | 'fail' | 'delay' | 'down' | 'crash';

export interface SandboxFaultWindow {
  kind: 'sandbox';
  service: Service;
  fault: SandboxFaultKind;
  atMs: number;
  untilMs: number;
  /** What `PUT /_faults` sets on the sandbox while the window lasts. */
  faults: FaultsPatch;
}

/**
 * Where the run's Temporal lives: the embedded dev server on a SQLite file (what `npm start`
 * runs), or the multi-process cluster on PostgreSQL (what `npm run cluster` runs).
 */
export type Topology = 'embedded' | 'cluster';

/**
 * A process fault. `*_kill` is SIGKILL: no shutdown code runs, whatever was in flight is cut
 * where it stood. Those with `restartAfterMs` are started again by the schedule after that
 * pause; the others are brought back by the supervisor (its restart after a crash).
 * `afterRequestMs`: the kill waits for the next request the process receives, then this
 * long, so that it lands with a request in flight.
 */
export type ProcessFault =
  | { kind: 'worker_kill'; atMs: number; worker: 0 | 1; restartAfterMs: number }
  | { kind: 'api_restart'; atMs: number; api: 0 | 1 }
  | { kind: 'api_kill'; atMs: number; api: 0 | 1; afterRequestMs: number }
  | { kind: 'bank_kill'; atMs: number; afterRequestMs: number }
  | { kind: 'reservations_kill'; atMs: number; afterRequestMs: number }
  /** Embedded: the dev server stopped (SIGTERM) and started again on the same file. */
  | { kind: 'temporal_restart'; atMs: number; downMs: number }
  /** Embedded: the dev server killed outright; the supervisor restarts it on the same file. */
  | { kind: 'temporal_kill'; atMs: number }
  /** Cluster: one history process killed outright; the other takes its shards until it is back. */
  | { kind: 'history_kill'; atMs: number; history: 0 | 1; restartAfterMs: number }
  /** Cluster: the frontend killed outright; the supervisor restarts it. */
  | { kind: 'frontend_kill'; atMs: number }
  /**
   * Cluster: PostgreSQL stopped and started again after `downMs`: `fast` is its clean
   * shutdown (SIGINT), `immediate` (SIGQUIT) skips the checkpoint, so the next start replays
   * its write-ahead log as after a crash.
   */
  | { kind: 'postgres_restart'; atMs: number; downMs: number; mode: 'fast' | 'immediate' };

export type ProcessFaultKind = ProcessFault['kind'];

/**
 * Process faults per minute of run, by topology; each kind at least once per run. The
 * order of the list is the order of the report's rows.
 */
export const PROCESS_FAULT_RATES: Record<Topology, ReadonlyArray<readonly [ProcessFaultKind, number]>> = {
  embedded: [
    ['worker_kill', 0.8],
    ['api_kill', 0.4],
    ['api_restart', 0.4],
    ['bank_kill', 0.4],
    ['reservations_kill', 0.4],
    ['temporal_kill', 0.4],
    ['temporal_restart', 0.4],
  ],
  cluster: [
    ['worker_kill', 0.8],
    ['api_kill', 0.4],
    ['api_restart', 0.4],
    ['bank_kill', 0.4],
    ['reservations_kill', 0.4],
    ['history_kill', 0.6],
    ['frontend_kill', 0.4],
    ['postgres_restart', 0.4],
  ],
};

/**
 * One track per sandbox of non-overlapping windows. The first four windows are the four
 * kinds in a seeded order, so a one-minute run meets each of them; then a seeded mix.
 */
export function planSandboxFaults(rng: Rng, service: Service, durationMs: number): SandboxFaultWindow[] {
  const { stepDeadlineMs, attentionAfterMs, downstreamTimeoutMs } = CHAOS_TIMINGS;
  const windows: SandboxFaultWindow[] = [];
  const firstRound = rng.shuffle<SandboxFaultKind>(['drop', 'fail', 'delay', 'down', 'crash']);
  let t = rng.int(1_000, 3_000);
  for (let i = 0; ; i++) {
    const fault =
      firstRound[i] ??
      rng.weighted<SandboxFaultKind>([
        ['drop', 5],
        ['fail', 2],
        ['delay', 2],
        ['down', 1.5],
        ['crash', 1.5],
      ]);
    let length: number;
    let faults: SandboxFaultWindow['faults'];
    switch (fault) {
      case 'drop':
        length = rng.int(6_000, 12_000);
        faults = { dropResponseAfterCommit: rng.pick([0.3, 0.5, 0.7]) };
        break;
      case 'fail':
        length = rng.int(4_000, 8_000);
        faults = { failBeforeCommit: rng.pick([0.2, 0.35, 0.5]) };
        break;
      case 'delay':
        // Past the worker's downstream timeout: the call times out, the effect still commits.
        length = rng.int(4_000, 8_000);
        faults = { delayMs: downstreamTimeoutMs + rng.int(500, 2_000) };
        break;
      case 'crash':
        // The service dies by SIGKILL right after a commit, before answering; the stack's
        // supervisor starts it again (with no faults), so a window is usually one crash.
        length = rng.int(3_000, 6_000);
        faults = { crashAfterCommit: rng.pick([0.5, 1]) };
        break;
      case 'down':
        // Longer than a step deadline plus the attention delay: steps are fenced, and the
        // compensations that fence them fail long enough to raise NeedsAttention.
        length = stepDeadlineMs + attentionAfterMs + rng.int(2_000, 5_000);
        faults = { down: true };
        break;
    }
    if (t + length > durationMs - 1_000) break;
    windows.push({ kind: 'sandbox', service, fault, atMs: t, untilMs: t + length, faults });
    t += length + rng.int(1_000, 4_000);
  }
  return windows;
}

/**
 * Process faults, spread evenly (with jitter) over the run in a seeded order: one slot each,
 * so that two rarely overlap (a fault on a process still coming back from the previous one
 * waits for it).
 */
export function planProcessFaults(rng: Rng, durationMs: number, topology: Topology): ProcessFault[] {
  const minutes = durationMs / 60_000;
  const kinds = PROCESS_FAULT_RATES[topology].flatMap(([kind, perMinute]) =>
    Array<ProcessFaultKind>(Math.max(1, Math.floor(minutes * perMinute))).fill(kind),
  );
  const order = rng.shuffle(kinds);
  const start = 5_000;
  const end = Math.max(start + 1_000, durationMs - 12_000);
  const slot = (end - start) / order.length;
  return order.map((kind, i): ProcessFault => {
    const atMs = Math.round(start + slot * i + slot * (0.1 + 0.5 * rng.next()));
    switch (kind) {
      case 'worker_kill':
        return { kind, atMs, worker: rng.chance(0.5) ? 0 : 1, restartAfterMs: rng.int(500, 4_000) };
      case 'api_restart':
        return { kind, atMs, api: rng.chance(0.5) ? 0 : 1 };
      case 'api_kill':
        return { kind, atMs, api: rng.chance(0.5) ? 0 : 1, afterRequestMs: rng.int(0, 50) };
      case 'bank_kill':
      case 'reservations_kill':
        // A sandbox answers in a few milliseconds: a kill within that lands mid-request.
        return { kind, atMs, afterRequestMs: rng.int(0, 5) };
      case 'temporal_restart':
        return { kind, atMs, downMs: rng.int(3_000, 7_000) };
      case 'temporal_kill':
      case 'frontend_kill':
        return { kind, atMs };
      case 'history_kill':
        // Sometimes back before membership notices (~5 s), sometimes after its shards moved.
        return { kind, atMs, history: rng.chance(0.5) ? 0 : 1, restartAfterMs: rng.int(500, 10_000) };
      case 'postgres_restart':
        return { kind, atMs, downMs: rng.int(1_000, 5_000), mode: rng.chance(0.5) ? 'fast' : 'immediate' };
    }
  });
}
