// What a chaos run reads from its children's logs: the structured fields of their JSON
// lines, as they are printed. The sandboxes' `fault_injected` events (the ground truth of
// what fired), the workers' failed downstream calls, and every Node part's requests in
// flight (so that a kill can land with one cut). No message text is matched.
import { LogEvent } from '../../common/log-events.js';
import type { FaultName } from '../../downstream/shared/faults.js';
import { SERVICES, type Service } from './vocabulary.js';

/** What the children reported, in structured fields, that the report counts. */
export interface LogCounts {
  /** Effects committed whose answer the sandbox then destroyed (dropResponseAfterCommit). */
  droppedResponses: Record<Service, number>;
  /** Effects committed after which the sandbox killed itself before answering (crashAfterCommit). */
  crashedAfterCommit: Record<Service, number>;
  /** 503 injected_failure before anything was done (failBeforeCommit). */
  failedBeforeCommit: Record<Service, number>;
  /** Connections reset while the service was `down`. */
  refusedWhileDown: Record<Service, number>;
  /** Requests held by an injected delay before their commit (delayMs). */
  delayed: Record<Service, number>;
  /**
   * The workers' downstream calls that failed, by how: `unavailable` (a timeout, a reset, a
   * 5xx: retried with the same key) or `refused` (a business error: final).
   */
  downstreamCallsFailed: Record<string, number>;
}

/** Which count each fault a sandbox reports goes to. */
const COUNT_OF_FAULT: Record<FaultName, Exclude<keyof LogCounts, 'downstreamCallsFailed'>> = {
  dropResponseAfterCommit: 'droppedResponses',
  crashAfterCommit: 'crashedAfterCommit',
  failBeforeCommit: 'failedBeforeCommit',
  down: 'refusedWhileDown',
  delayMs: 'delayed',
};

/** The fields of a JSON log line that the run reads; anything else a line holds is ignored. */
export interface LogEntry {
  event?: unknown;
  fault?: unknown;
  result?: unknown;
  reqId?: unknown;
  req?: { method?: unknown };
}

/** A log line as its fields, or undefined for a line that is not a JSON object (a banner, a stack trace). */
export function logEntryOf(line: string): LogEntry | undefined {
  if (!line.startsWith('{')) return undefined;
  try {
    const entry = JSON.parse(line) as unknown;
    return entry !== null && typeof entry === 'object' && !Array.isArray(entry) ? (entry as LogEntry) : undefined;
  } catch {
    return undefined;
  }
}

export function newLogCounts(): LogCounts {
  const perService = () => Object.fromEntries(SERVICES.map((s) => [s, 0])) as Record<Service, number>;
  return {
    droppedResponses: perService(),
    crashedAfterCommit: perService(),
    failedBeforeCommit: perService(),
    refusedWhileDown: perService(),
    delayed: perService(),
    downstreamCallsFailed: {},
  };
}

/**
 * Counts a sandbox's line when it reports an injected fault; returns the fault, so the
 * caller can tell a crash (the process is about to die by its own hand) from the rest.
 */
export function countFault(counts: LogCounts, service: Service, entry: LogEntry): FaultName | undefined {
  if (entry.event !== LogEvent.faultInjected || typeof entry.fault !== 'string' || !Object.hasOwn(COUNT_OF_FAULT, entry.fault))
    return undefined;
  const fault = entry.fault as FaultName;
  counts[COUNT_OF_FAULT[fault]][service]++;
  return fault;
}

/** Counts a worker's line when it reports a failed downstream call. */
export function countDownstreamFailure(counts: LogCounts, entry: LogEntry): void {
  if (entry.event !== LogEvent.downstreamCallFailed) return;
  const how = typeof entry.result === 'string' ? entry.result : 'unknown';
  counts.downstreamCallsFailed[how] = (counts.downstreamCallsFailed[how] ?? 0) + 1;
}

/**
 * POST requests a Node part has received and not yet answered, from the `event` of its
 * request lines (received, then finished or cut). A request whose client gave up is
 * answered into the void without a line (a sandbox request held by an injected delay past
 * the worker's timeout), so one unanswered longer than the part ever takes counts as over.
 */
export class InFlight {
  private readonly open = new Map<string, number>();
  private readonly waiters = new Set<() => void>();

  constructor(private readonly staleAfterMs: number) {}

  feed(entry: LogEntry): void {
    if (typeof entry.reqId !== 'string') return;
    if (entry.event === LogEvent.requestReceived) {
      if (entry.req?.method !== 'POST') return;
      this.open.set(entry.reqId, Date.now());
      for (const check of [...this.waiters]) check();
    } else if (entry.event === LogEvent.requestFinished || entry.event === LogEvent.requestCut) {
      this.open.delete(entry.reqId);
    }
  }

  /** A new process: nothing of the old one is in flight any more. */
  reset(): void {
    this.open.clear();
  }

  count(): number {
    const since = Date.now() - this.staleAfterMs;
    return [...this.open.values()].filter((t) => t >= since).length;
  }

  /**
   * Resolves once a POST is in flight (checked after the output chunk that announced it,
   * which may also hold its answer), or after `timeoutMs`.
   */
  busy(timeoutMs: number): Promise<void> {
    if (this.count() > 0) return Promise.resolve();
    return new Promise((resolve) => {
      const check = () =>
        setImmediate(() => {
          if (this.count() > 0) done();
        });
      const done = () => {
        clearTimeout(timer);
        this.waiters.delete(check);
        resolve();
      };
      const timer = setTimeout(done, timeoutMs);
      this.waiters.add(check);
    });
  }
}
