// The operations an API serves, as its OpenAPI document describes them: every
// `POST /v1/<plural>` whose operationId is `start_<type>`, with its request schema. The
// client knows the built-in operations from operations.ts; one added to a deployment (an
// operation loaded from outside retrysafe's source) is found here instead, so the library
// and the CLI start it like any other.
import { OPERATIONS } from './operations.js';
import type { JsonSchema } from './schema-check.js';

export interface OperationDescription {
  /** `POST /v1/<plural>` */
  plural: string;
  description: string;
  /** Other names of its CLI command. */
  aliases: readonly string[];
  request: JsonSchema;
}

/** The operations this client was built with. */
export const BUILT_IN_OPERATIONS: Readonly<Record<string, OperationDescription>> = OPERATIONS;

const START = /^start_([a-z][a-z0-9_]*)$/;
const COLLECTION = /^\/v1\/([a-z][a-z0-9-]*)$/;

/** The operations an OpenAPI document (GET /openapi.json) declares, by type. */
export function operationsOf(document: unknown): Map<string, OperationDescription> {
  const found = new Map<string, OperationDescription>();
  const paths = (document as { paths?: Record<string, Record<string, unknown>> } | null)?.paths ?? {};
  for (const [path, methods] of Object.entries(paths)) {
    const plural = COLLECTION.exec(path)?.[1];
    const post = methods?.post as
      | { operationId?: string; description?: string; requestBody?: { content?: Record<string, { schema?: JsonSchema }> } }
      | undefined;
    const type = post?.operationId ? START.exec(post.operationId)?.[1] : undefined;
    const request = post?.requestBody?.content?.['application/json']?.schema;
    if (!plural || !type || !request) continue;
    found.set(type, { plural, description: post?.description ?? '', aliases: [], request });
  }
  return found;
}
