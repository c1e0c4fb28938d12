// What a failed Temporal call means for the request that made it. Every answer the engine
// can give has a meaning here, so the API never answers 500 for one: an engine that did not
// answer, is overloaded, or cannot serve retrysafe as it is set up is a 503 the client may
// retry with the same key (the claim either happened atomically or not at all, so a retry
// can only find or make one execution); a request the engine refuses is a 4xx, since the
// same request would be refused again. Why it failed goes to the log, never to the client.
import {
  NamespaceNotFoundError,
  ServiceError,
  WorkflowNotFoundError,
  defaultGrpcRetryOptions,
  isGrpcServiceError,
  makeGrpcRetryInterceptor,
  type GrpcRetryOptions,
} from '@temporalio/client';
import proto from '@temporalio/proto';

/** A Temporal call that did not finish within the API's engine deadline. */
export class EngineTimeoutError extends Error {
  constructor(readonly timeoutMs: number) {
    super(`Temporal did not answer within ${timeoutMs} ms`);
    this.name = 'EngineTimeoutError';
  }
}

/** gRPC status codes (https://grpc.github.io/grpc/core/md_doc_statuscodes.html). */
export const GrpcCode = {
  CANCELLED: 1,
  UNKNOWN: 2,
  INVALID_ARGUMENT: 3,
  DEADLINE_EXCEEDED: 4,
  NOT_FOUND: 5,
  ALREADY_EXISTS: 6,
  PERMISSION_DENIED: 7,
  RESOURCE_EXHAUSTED: 8,
  FAILED_PRECONDITION: 9,
  ABORTED: 10,
  OUT_OF_RANGE: 11,
  UNIMPLEMENTED: 12,
  INTERNAL: 13,
  UNAVAILABLE: 14,
  DATA_LOSS: 15,
  UNAUTHENTICATED: 16,
} as const;

/** A gRPC status as the SDK raises it: the error itself, or the cause of its ServiceError. */
interface GrpcStatus {
  code: number;
  details: string;
  metadata: { get(key: string): unknown[] };
}

function grpcStatus(err: unknown): GrpcStatus | undefined {
  let current: unknown = err;
  for (let depth = 0; depth < 5 && current instanceof Error; depth++) {
    if (isGrpcServiceError(current)) return current as unknown as GrpcStatus;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

/** The gRPC status code of `err` or of the first error in its `cause` chain that has one. */
export function grpcCode(err: unknown): number | undefined {
  return grpcStatus(err)?.code;
}

/** The failure types Temporal attached to a status (`temporal.api.errordetails.v1.*Failure`). */
function failureTypes(status: GrpcStatus): string[] {
  const types: string[] = [];
  for (const bin of status.metadata.get('grpc-status-details-bin')) {
    if (!(bin instanceof Uint8Array)) continue;
    try {
      for (const detail of proto.google.rpc.Status.decode(bin).details) types.push(detail.type_url?.split('/').pop() ?? '');
    } catch {
      // Not a google.rpc.Status: nothing to learn from it.
    }
  }
  return types;
}

/** What the answer says. */
export type EngineAnswer =
  /** 503 engine_unavailable: the engine did not answer, failed in passing, or cannot serve retrysafe as it is set up. */
  | 'unavailable'
  /** 503 engine_busy: the engine refused the call as overloaded (its rate or concurrency limits). */
  | 'busy'
  /** 400 invalid_request: the engine refused the request as malformed. */
  | 'refused'
  /** 413 payload_too_large: the request is larger than the engine accepts. */
  | 'too_large';

export interface EngineFailure {
  answer: EngineAnswer;
  /**
   * The engine will keep failing this way until an operator acts (credentials, permissions,
   * namespace, search attributes, versions): logged as an error rather than a warning.
   */
  needsOperator: boolean;
  /** What went wrong, for the log only. */
  cause: string;
  /** For a refusal: the part of the request it was about, when the engine's answer says. */
  field?: { field: string; message: string };
}

/**
 * Causes of INVALID_ARGUMENT that are about the engine's set-up, not the request: the search
 * attributes retrysafe writes and filters on are not registered in the namespace (yet).
 * (Temporal's wordings: a start, a visibility query, and the validator's.)
 */
const SEARCH_ATTRIBUTES_MISSING =
  /no mapping defined for (search attribute|field name)|invalid search attribute|is not a valid search attribute|search attribute \S+ is not defined/i;
/** A payload, the memo or the search attributes over the engine's size limits. */
const OVER_SIZE_LIMIT = /blob data size exceeds limit|memo size exceeds limit|size of search attributes? .*exceeds/i;
/** gRPC's own refusal of a message over its maximum size (RESOURCE_EXHAUSTED, not an overload). */
const OVER_MESSAGE_LIMIT = /message larger than max/i;
/** A history read of an execution that has passed its retention (INVALID_ARGUMENT, oddly): as WorkflowNotFoundError. */
const HISTORY_GONE = /history not found/i;
/** The workflow ID (`<tenant>/<key>`) is longer than the engine's ID limit. */
const ID_TOO_LONG = /workflowid (length )?exceeds/i;

/** What `err`, raised by a Temporal call, means; undefined when it did not come from the engine. */
export function engineFailure(err: unknown): EngineFailure | undefined {
  if (err instanceof EngineTimeoutError) return { answer: 'unavailable', needsOperator: false, cause: err.message };
  // The SDK turns these two statuses into errors of its own, without the gRPC status.
  if (err instanceof NamespaceNotFoundError) {
    return { answer: 'unavailable', needsOperator: true, cause: `namespace ${err.namespace} does not exist` };
  }
  // An execution that is not there where a route does not expect that (each route answers
  // 404 for a key that names none): it passed its retention while the request read it. A
  // retry answers consistently: a read finds nothing, a start claims the key anew.
  if (err instanceof WorkflowNotFoundError) return { answer: 'unavailable', needsOperator: false, cause: err.message };
  const status = grpcStatus(err);
  // A ServiceError without a gRPC status: the SDK could not even make the call.
  if (!status)
    return err instanceof ServiceError ? { answer: 'unavailable', needsOperator: false, cause: err.message } : undefined;
  const cause = `${codeName(status.code)}: ${status.details}`;
  const meaning = (answer: EngineAnswer, needsOperator: boolean): EngineFailure => ({ answer, needsOperator, cause });
  switch (status.code) {
    case GrpcCode.INVALID_ARGUMENT:
      if (SEARCH_ATTRIBUTES_MISSING.test(status.details)) return meaning('unavailable', true);
      if (OVER_SIZE_LIMIT.test(status.details)) return meaning('too_large', false);
      if (HISTORY_GONE.test(status.details)) return meaning('unavailable', false);
      if (ID_TOO_LONG.test(status.details)) {
        return { ...meaning('refused', false), field: { field: 'key', message: 'is longer than the workflow engine accepts' } };
      }
      return meaning('refused', false);
    case GrpcCode.RESOURCE_EXHAUSTED:
      return OVER_MESSAGE_LIMIT.test(status.details) ? meaning('too_large', false) : meaning('busy', false);
    case GrpcCode.NOT_FOUND:
      // A namespace or an execution (see WorkflowNotFoundError above); only the first needs an operator.
      return meaning(
        'unavailable',
        failureTypes(status).includes('temporal.api.errordetails.v1.NamespaceNotFoundFailure') ||
          /^namespace .* not found/i.test(status.details),
      );
    // Wrong or missing credentials (an API key to Temporal Cloud, mTLS), a namespace that is
    // not active here or is being deleted, a server or SDK version the other does not
    // support, an API the server lacks, lost data: retrying helps once an operator acted.
    case GrpcCode.PERMISSION_DENIED:
    case GrpcCode.UNAUTHENTICATED:
    case GrpcCode.FAILED_PRECONDITION:
    case GrpcCode.UNIMPLEMENTED:
    case GrpcCode.DATA_LOSS:
      return meaning('unavailable', true);
    // ALREADY_EXISTS: a start that finds its key taken is a replay, answered where the claim
    // is made; anywhere else the engine found the thing asked for already there, which a
    // retry reads.
    default:
      return meaning('unavailable', false);
  }
}

function codeName(code: number): string {
  return Object.entries(GrpcCode).find(([, c]) => c === code)?.[0] ?? `gRPC status ${code}`;
}

/**
 * The API's gRPC retries: the SDK's own, except for RESOURCE_EXHAUSTED. An overloaded engine
 * is answered at once (503 engine_busy, Retry-After) instead of being retried with a back-off
 * of seconds inside a request, where the engine deadline would end it as unavailable; and a
 * message over gRPC's size limit is refused the same way every time.
 */
export function engineRetryInterceptor(): ReturnType<typeof makeGrpcRetryInterceptor> {
  const defaults: GrpcRetryOptions = defaultGrpcRetryOptions();
  return makeGrpcRetryInterceptor({
    ...defaults,
    retryableDecider: (attempt, status) =>
      status.code !== GrpcCode.RESOURCE_EXHAUSTED && defaults.retryableDecider(attempt, status),
  });
}
