// The client package's table of operations and its schema of the operation resource are
// generated from the catalog and the API's schemas (it is published without the server's
// code): this fails when either changed and `npm run generate` was not run, so the client,
// its types, its guard and the CLI never lag behind the API.
import { readFileSync } from 'node:fs';
import { expect, it } from 'vitest';
import {
  CLIENT_OPERATIONS_FILE,
  CLIENT_OPERATIONS_TABLE_FILE,
  CLIENT_RESOURCE_SCHEMA_FILE,
  clientOperationsSource,
  clientOperationsTableSource,
  clientResourceSchemaSource,
} from '../../tools/generate-client.js';

it('client/lib/operations.ts and operations.json are what `npm run generate` writes from the catalog now', async () => {
  expect(readFileSync(CLIENT_OPERATIONS_FILE, 'utf8')).toBe(await clientOperationsSource());
  expect(readFileSync(CLIENT_OPERATIONS_TABLE_FILE, 'utf8')).toBe(await clientOperationsTableSource());
});

it("client/lib/resource-schema.ts is what `npm run generate` writes from the API's schema now", async () => {
  expect(readFileSync(CLIENT_RESOURCE_SCHEMA_FILE, 'utf8')).toBe(await clientResourceSchemaSource());
});
