// The actions behind the operation commands (pay, checkout, transfer, ...), status, wait, list and cancel. Each returns its exit
// code; the outcome goes to stdout (a table, or the API's JSON with --json), advice to stderr.
import {
  ApiError,
  createClient,
  IdempotencyConflictError,
  OperationAlreadyCompletedError,
  OperationFailedError,
  OperationPendingError,
  type ListFilter,
  type Operation,
  type RetryEvent,
  type RetrySafe,
} from '../lib/index.js';
import { EXIT, type ExitCode } from './exit-codes.js';
import { startProgress, type Progress } from './progress.js';
import { json, listTable, operationTable, shellQuote } from './render.js';

export interface ConnectionOpts {
  apiUrl: string;
  apiKey?: string;
  timeout: number;
  json?: boolean;
}

/** 700 → "700ms", 1500 → "1.5s", 30000 → "30s". */
function seconds(milliseconds: number): string {
  return milliseconds < 1000 ? `${milliseconds}ms` : `${Number((milliseconds / 1000).toFixed(1))}s`;
}

const out = (text: string) => process.stdout.write(text);
const err = (text: string) => process.stderr.write(`${text}\n`);

function client(opts: ConnectionOpts, progress: Progress): RetrySafe {
  return createClient({
    baseUrl: opts.apiUrl,
    apiKey: opts.apiKey,
    timeoutMs: opts.timeout,
    onRetry: (e: RetryEvent) =>
      progress.update(
        `${e.error.status === null ? `no answer from the API (${e.error.code})` : `the API answered ${e.error.status}`}; ` +
          `retrying in ${(e.delayMs / 1000).toFixed(1)} s with the same key ${e.key ?? ''}`,
      ),
    onPoll: (op: Operation) => progress.update(`${op.key}: processing (step ${op.step ?? 'starting'})`),
  });
}

function printOperation(op: Operation, opts: ConnectionOpts, notes: { replayed?: boolean } = {}): void {
  out(opts.json ? json(op) : operationTable(op, notes));
}

/** Maps what a call threw to output and an exit code. `retry` is the command that repeats the call safely. */
function report(error: unknown, opts: ConnectionOpts, retry?: string): ExitCode {
  if (error instanceof OperationAlreadyCompletedError) {
    printError(error, opts);
    err(`nothing to cancel: ${error.key ?? 'the operation'} has already completed`);
    return EXIT.completed;
  }
  if (error instanceof OperationFailedError) {
    printOperation(error.operation, opts);
    const compensations = error.compensations.length > 0 ? ` (compensations: ${error.compensations.join(', ')})` : '';
    err(`failed: ${error.code}: ${error.operation.error.message}${compensations}`);
    return EXIT.failed;
  }
  if (error instanceof OperationPendingError) {
    printOperation(error.operation, opts);
    err(`still processing after ${seconds(opts.timeout)}: key ${error.key} (step: ${error.operation.step ?? 'not started yet'})`);
    err(`it keeps running on its own; follow it with: retrysafe wait ${shellQuote(error.key)}`);
    return EXIT.pending;
  }
  if (error instanceof ApiError) {
    printError(error, opts);
    if (error instanceof IdempotencyConflictError) {
      err(`error: ${error.message}`);
      err(`differences: ${error.differences.join(', ') || '(not named)'}; use a new --key for a new operation`);
      return EXIT.error;
    }
    err(`error: ${error.message}`);
    if (error.code === 'unauthorized') err('send an API key with --api-key or RETRYSAFE_API_KEY');
    else if (error.status === null) {
      err(`is the API running at ${opts.apiUrl}? \`npm start\` starts the local stack (or set --api-url / RETRYSAFE_API_URL)`);
      if (retry) err(`the outcome is unknown; repeating it with the same key is safe: ${retry}`);
    } else if (error.retryable && retry) {
      // 429 and 503 until the deadline: the API kept refusing, so later is the answer.
      err(`the API is busy; repeating it later with the same key is safe: ${retry}`);
    }
    return EXIT.error;
  }
  err(`error: ${error instanceof Error ? error.message : String(error)}`);
  return EXIT.error;
}

/** With --json, an ApiError is JSON on stdout too, so a script reads one document whatever happened. */
function printError(error: ApiError, opts: ConnectionOpts): void {
  if (!opts.json) return;
  out(
    json({
      error: {
        status: error.status,
        code: error.code,
        message: error.message,
        key: error.key ?? null,
        ...(error instanceof IdempotencyConflictError ? { differences: error.differences } : {}),
      },
    }),
  );
}

/** Runs `call` with a spinner (when stderr is a terminal) that is gone before anything is printed. */
async function withProgress<T>(text: string, call: (progress: Progress) => Promise<T>): Promise<T> {
  const progress = startProgress(process.stderr, text);
  try {
    return await call(progress);
  } finally {
    progress.stop();
  }
}

/**
 * Runs a call that may start or follow an operation. `retry` is the command that repeats
 * it safely (same key); on Ctrl-C it is printed, since the operation may be running.
 */
async function start(
  what: string,
  opts: ConnectionOpts & { key: string },
  retry: string | undefined,
  call: (c: RetrySafe) => Promise<Operation & { meta: { replayed: boolean } }>,
): Promise<ExitCode> {
  const onInterrupt = () => {
    process.stderr.write(
      `\ninterrupted: key ${opts.key} may have started; see it with: retrysafe wait ${shellQuote(opts.key)}\n`,
    );
    if (retry) process.stderr.write(`or repeat it safely with: ${retry}\n`);
    process.exit(130);
  };
  process.once('SIGINT', onInterrupt);
  try {
    const op = await withProgress(`${what} (key ${opts.key})`, (progress) => call(client(opts, progress)));
    printOperation(op, opts, { replayed: op.meta.replayed });
    return EXIT.ok;
  } catch (error) {
    return report(error, opts, retry);
  } finally {
    process.off('SIGINT', onInterrupt);
  }
}

function retryLine(command: string, opts: ConnectionOpts & { key: string }, args: string[]): string {
  return ['retrysafe', command, ...args, '--key', shellQuote(opts.key)].join(' ');
}

/**
 * Starts (or replays) an operation of `type` and waits for its outcome. `command` and
 * `args` make the line that repeats the call safely (same key), printed when its outcome is
 * unknown.
 */
export function startOperation(
  type: string,
  body: Record<string, unknown>,
  opts: ConnectionOpts & { key: string },
  retry: { command: string; args: string[] },
): Promise<ExitCode> {
  return start(`${type} (${summary(body)})`, opts, retryLine(retry.command, opts, retry.args), (c) =>
    c.start(type, body, { idempotencyKey: opts.key }),
  );
}

/** `1250 EUR from acc_alice`-ish: the request's scalar fields in one short line for the spinner. */
function summary(body: Record<string, unknown>): string {
  return Object.entries(body)
    .filter(([field, v]) => (typeof v === 'string' || typeof v === 'number') && field !== 'description')
    .map(([field, v]) => `${field} ${String(v)}`)
    .join(', ');
}

export async function wait(key: string, opts: ConnectionOpts): Promise<ExitCode> {
  return start(`waiting for ${key}`, { ...opts, key }, undefined, (c) => c.operations.wait(key));
}

/** Prints the operation as it is now; the exit code follows its status (0, 1, or 3 while processing). */
export async function status(key: string, opts: ConnectionOpts): Promise<ExitCode> {
  try {
    const op = await withProgress(`reading ${key}`, (progress) => client(opts, progress).operations.get(key));
    printOperation(op, opts);
    if (op.status === 'processing') {
      err(`still processing; follow it with: retrysafe wait ${shellQuote(key)}`);
      return EXIT.pending;
    }
    return op.status === 'succeeded' ? EXIT.ok : EXIT.failed;
  } catch (error) {
    return report(error, opts);
  }
}

export async function list(filter: ListFilter, opts: ConnectionOpts): Promise<ExitCode> {
  try {
    const page = await withProgress('listing operations', (progress) => client(opts, progress).operations.list(filter));
    out(opts.json ? json(page) : listTable(page));
    if (page.nextCursor !== null && !opts.json) {
      const args = ['retrysafe', 'list'];
      if (filter.status) args.push('--status', filter.status);
      if (filter.type) args.push('--type', filter.type);
      if (filter.version) args.push('--definition', filter.version);
      if (filter.limit !== undefined) args.push('--limit', String(filter.limit));
      err(`more: ${[...args, '--cursor', page.nextCursor].join(' ')}`);
    }
    return EXIT.ok;
  } catch (error) {
    return report(error, opts);
  }
}

/**
 * Asks the operation to stop at its next step boundary. Exits 0 when the cancel is under
 * way, or the operation had already ended cancelled (a repeated cancel); 5 when it had
 * already ended otherwise, printing how; 4 for anything else (unknown key included).
 */
export async function cancel(key: string, opts: ConnectionOpts): Promise<ExitCode> {
  try {
    const op = await withProgress(`cancelling ${key}`, (progress) => client(opts, progress).operations.cancel(key));
    printOperation(op, opts);
    err(`cancel requested: ${key} stops at its next step boundary, undoes what it did and ends failed (cancelled)`);
    err(`follow it with: retrysafe wait ${shellQuote(key)}`);
    return EXIT.ok;
  } catch (error) {
    if (!(error instanceof OperationAlreadyCompletedError)) return report(error, opts);
    let op: Operation;
    try {
      op = await withProgress(`reading ${key}`, (progress) => client(opts, progress).operations.get(key));
    } catch {
      // The 409 already says it ended; how it ended is a courtesy.
      return report(error, opts);
    }
    printOperation(op, opts);
    if (op.status === 'failed' && op.error?.code === 'cancelled') {
      err(`already cancelled: ${key} ended failed (cancelled)`);
      return EXIT.ok;
    }
    err(
      `nothing to cancel: ${key} had already ${op.status === 'succeeded' ? 'succeeded' : `failed (${op.error?.code ?? 'unknown'})`}`,
    );
    return EXIT.completed;
  }
}
