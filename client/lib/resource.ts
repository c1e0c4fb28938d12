// Whether an answer is the operation resource the types promise. A proxy's error page or a
// truncated body must not pass for an outcome, so the answer is checked against the
// resource's schema as the API declares it (resource-schema.ts, generated from the API's
// own schema). Fields the API may add later are ignored, and the newest fields are checked
// only when present, so the client keeps working against an API a release apart.
import { OPERATION_SCHEMA } from './resource-schema.js';
import { schemaProblem, type JsonSchema } from './schema-check.js';
import type { Operation, OperationList } from './types.js';

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

export function isOperation(v: unknown): v is Operation {
  return schemaProblem(OPERATION_SCHEMA as JsonSchema, v) === undefined;
}

export function isOperationList(v: unknown): v is OperationList {
  return (
    isObject(v) &&
    Array.isArray(v.operations) &&
    v.operations.every(isOperation) &&
    (v.nextCursor === null || typeof v.nextCursor === 'string')
  );
}
