// Fault injection for the sandboxes (SANDBOX_FAULTS=1). The faults reproduce what a real
// payment provider does to its callers: refuses connections, fails before doing anything,
// answers slowly, does the work and loses the answer, or dies the moment after the work
// is committed. They apply only to effect endpoints; reads, health and set-up always work
// so an auditor can check the ledgers. Each fault that fires is logged with
// `event: "fault_injected"` and `fault` (its name in `PUT /_faults`): the ground truth a
// chaos run counts.
import type { FastifyBaseLogger, FastifyReply, FastifyRequest } from 'fastify';
import { Type, type Static } from 'typebox';
import { Problem } from '../../common/http/problem.js';
import { LogEvent } from '../../common/log-events.js';
import { flushLogsSync, type Logger } from '../../common/logger.js';
import { shuttingDown, type SandboxApp } from './http.js';

export const FaultsSchema = Type.Object(
  {
    dropResponseAfterCommit: Type.Number({ minimum: 0, maximum: 1 }),
    crashAfterCommit: Type.Number({ minimum: 0, maximum: 1 }),
    failBeforeCommit: Type.Number({ minimum: 0, maximum: 1 }),
    delayMs: Type.Integer({ minimum: 0, maximum: 120_000 }),
    down: Type.Boolean(),
  },
  { additionalProperties: false },
);
export type Faults = Static<typeof FaultsSchema>;

export const FaultsPatchSchema = Type.Partial(FaultsSchema, { additionalProperties: false });
export type FaultsPatch = Static<typeof FaultsPatchSchema>;

export const NO_FAULTS: Faults = {
  dropResponseAfterCommit: 0,
  crashAfterCommit: 0,
  failBeforeCommit: 0,
  delayMs: 0,
  down: false,
};

/** The names of the faults, as `PUT /_faults` and the `fault` field of their log lines spell them. */
export type FaultName = keyof Faults;

type FaultLog = Pick<Logger | FastifyBaseLogger, 'warn'>;

function reportFault(log: FaultLog, fault: FaultName, fields: object, message: string): void {
  log.warn({ ...fields, event: LogEvent.faultInjected, fault }, message);
}

/** A real crash: SIGKILL, so no shutdown code, no flush, no answer. */
const killThisProcess = (): void => {
  process.kill(process.pid, 'SIGKILL');
};

export class FaultInjector {
  private current: Faults = { ...NO_FAULTS };
  private readonly waiting = new Set<() => void>();

  constructor(
    readonly enabled: boolean,
    private readonly random: () => number = Math.random,
  ) {}

  get faults(): Faults {
    return { ...this.current };
  }

  update(patch: FaultsPatch): Faults {
    this.current = { ...this.current, ...patch };
    return this.faults;
  }

  /**
   * onRequest hook for effect routes: when `down`, the connection is reset before the
   * request is even read, exactly like a service that is not there.
   */
  readonly downHook = async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
    if (!this.enabled || !this.current.down) return;
    reportFault(request.log, 'down', {}, 'fault: down, resetting the connection');
    killConnection(request, reply);
  };

  /**
   * Runs just before the effect's transaction (with the key already marked in flight):
   * the injected delay, then the injected failure (503, nothing done).
   */
  async beforeCommit(log: FaultLog): Promise<void> {
    if (!this.enabled) return;
    const { delayMs } = this.current;
    if (delayMs > 0) {
      reportFault(log, 'delayMs', { delayMs }, 'fault: delaying before the commit');
      await this.sleep(delayMs);
    }
    if (this.current.failBeforeCommit > 0 && this.random() < this.current.failBeforeCommit) {
      reportFault(log, 'failBeforeCommit', {}, 'fault: failing before the commit (503 injected_failure)');
      throw new Problem(503, 'injected_failure', 'injected failure before commit (sandbox fault); nothing was done', {
        headers: { 'retry-after': '1' },
      });
    }
  }

  /**
   * Called after every commit on an effect's path, before anything is answered: the
   * moment a crash is most dangerous. With one transaction per request it loses only the
   * answer (the retry replays it); a build that committed the effect and its stored answer
   * separately would act again on the retry. Draws only when the fault is set.
   */
  afterCommit(log: FaultLog, what: object): void {
    if (!this.enabled) return;
    const p = this.current.crashAfterCommit;
    if (!(p > 0 && this.random() < p)) return;
    reportFault(log, 'crashAfterCommit', what, 'fault: committed, crashing now (SIGKILL)');
    flushLogsSync(log);
    killThisProcess();
  }

  /**
   * After a commit: should this answer be lost? Draws only when the fault is set; when it
   * fires, says so in the log (the caller then resets the connection).
   */
  dropsResponse(log: FaultLog, what: object): boolean {
    if (!this.enabled) return false;
    const p = this.current.dropResponseAfterCommit;
    if (!(p > 0 && this.random() < p)) return false;
    reportFault(log, 'dropResponseAfterCommit', what, 'fault: committed, dropping the response');
    return true;
  }

  /** Ends injected delays at once (on shutdown), so closing never waits two minutes. */
  cancelDelays(): void {
    for (const wake of [...this.waiting]) wake();
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve, reject) => {
      const wake = () => {
        clearTimeout(timer);
        this.waiting.delete(wake);
        reject(shuttingDown());
      };
      const timer = setTimeout(() => {
        this.waiting.delete(wake);
        resolve();
      }, ms);
      this.waiting.add(wake);
    });
  }
}

/**
 * Closes the client's connection without an answer. The reply is hijacked first, which
 * also stops the rest of Fastify's request lifecycle (no handler runs after `down`).
 */
export function killConnection(request: FastifyRequest, reply: FastifyReply): void {
  // Fastify logs no end for a hijacked reply: this line ends the request for whoever counts.
  request.log.info({ event: LogEvent.requestCut }, 'connection reset without an answer');
  reply.hijack();
  const socket = request.raw.socket as (typeof request.raw.socket & { resetAndDestroy?: () => void }) | null;
  if (socket && typeof socket.resetAndDestroy === 'function') socket.resetAndDestroy();
  else request.raw.destroy();
}

/** `GET /_faults` and `PUT /_faults`, registered only when faults are enabled. */
export function registerFaultRoutes(app: SandboxApp, injector: FaultInjector): void {
  app.addHook('preClose', async () => injector.cancelDelays());
  if (!injector.enabled) return;
  app.get('/_faults', { schema: { response: { 200: FaultsSchema } } }, async () => injector.faults);
  app.put('/_faults', { schema: { body: FaultsPatchSchema, response: { 200: FaultsSchema } } }, async (request) => {
    const faults = injector.update(request.body);
    request.log.warn({ faults }, 'sandbox faults changed');
    return faults;
  });
}
