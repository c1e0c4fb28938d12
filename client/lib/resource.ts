// Whether an answer is the operation resource the types promise. A proxy's error page or a
// truncated body must not pass for an outcome, so every field the client or its caller may
// act on is checked. Fields the API may add later are ignored, and the newest fields are
// checked only when present, so the client keeps working against an API a release apart.
import type { Operation, OperationList } from './types.js';

const OPERATION_STATUSES: ReadonlySet<unknown> = new Set(['processing', 'succeeded', 'failed']);
const STEP_STATUSES: ReadonlySet<unknown> = new Set(['pending', 'running', 'completed', 'failed', 'fenced', 'compensated']);
const NOTIFICATION_STATUSES: ReadonlySet<unknown> = new Set(['pending', 'delivered', 'failed']);

type Fields = Record<string, unknown>;

const isObject = (v: unknown): v is Fields => typeof v === 'object' && v !== null && !Array.isArray(v);
const isString = (v: unknown): v is string => typeof v === 'string';
const isStringOrNull = (v: unknown) => v === null || isString(v);
const isStringArray = (v: unknown) => Array.isArray(v) && v.every(isString);

const isStep = (v: unknown) => isObject(v) && isString(v.name) && STEP_STATUSES.has(v.status) && isString(v.downstreamKey);

const isError = (v: unknown) => isObject(v) && isString(v.code) && isString(v.message) && isStringArray(v.compensations);

const isNotification = (v: unknown) =>
  isObject(v) && NOTIFICATION_STATUSES.has(v.status) && Number.isInteger(v.attempts) && (v.attempts as number) >= 0;

export function isOperation(v: unknown): v is Operation {
  return (
    isObject(v) &&
    isString(v.key) &&
    // Any type: an API may serve operations this client was not built with.
    isString(v.type) &&
    OPERATION_STATUSES.has(v.status) &&
    isStringOrNull(v.step) &&
    isString(v.createdAt) &&
    isStringOrNull(v.completedAt) &&
    (v.result === undefined || (isObject(v.result) && Object.values(v.result).every(isString))) &&
    (v.error === undefined || isError(v.error)) &&
    Array.isArray(v.steps) &&
    v.steps.every(isStep) &&
    typeof v.needsAttention === 'boolean' &&
    isObject(v.links) &&
    isString(v.links.self) &&
    isString(v.links.temporalUi) &&
    (v.cancelRequested === undefined || typeof v.cancelRequested === 'boolean') &&
    (v.keyExpiresAt === undefined || isStringOrNull(v.keyExpiresAt)) &&
    (v.notification === undefined || isNotification(v.notification))
  );
}

export function isOperationList(v: unknown): v is OperationList {
  return isObject(v) && Array.isArray(v.operations) && v.operations.every(isOperation) && isStringOrNull(v.nextCursor);
}
