// Which failures of a Temporal call mean "the engine is not reachable right now". Those
// answer 503 engine_unavailable (safe to retry with the same key), never 500: the claim
// either happened atomically or not at all, so a retry can only find or make one execution.
import { ServiceError, isGrpcServiceError } from '@temporalio/client';

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
  RESOURCE_EXHAUSTED: 8,
  ABORTED: 10,
  INTERNAL: 13,
  UNAVAILABLE: 14,
} as const;

const UNAVAILABLE_CODES = new Set<number>([
  GrpcCode.CANCELLED,
  GrpcCode.UNKNOWN,
  GrpcCode.DEADLINE_EXCEEDED,
  GrpcCode.ABORTED,
  GrpcCode.INTERNAL,
  GrpcCode.UNAVAILABLE,
]);

/** The gRPC status code of `err` or of the first error in its `cause` chain that has one. */
export function grpcCode(err: unknown): number | undefined {
  let current: unknown = err;
  for (let depth = 0; depth < 5 && current instanceof Error; depth++) {
    if (isGrpcServiceError(current)) return current.code;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

/** Temporal answered that it is overloaded (rate or concurrency limits): it refused the call. */
export function isEngineBusy(err: unknown): boolean {
  return grpcCode(err) === GrpcCode.RESOURCE_EXHAUSTED;
}

export function isEngineUnavailable(err: unknown): boolean {
  if (err instanceof EngineTimeoutError) return true;
  const code = grpcCode(err);
  if (code !== undefined) return UNAVAILABLE_CODES.has(code);
  // A ServiceError without a gRPC status: the SDK could not even make the call.
  return err instanceof ServiceError;
}
