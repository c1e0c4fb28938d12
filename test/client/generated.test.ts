// The client package's table of operations is generated from the registry (it is published
// without the server's code): this fails when a definition changed and `npm run generate`
// was not run, so the client, its types and the CLI never lag behind the API.
import { readFileSync } from 'node:fs';
import { expect, it } from 'vitest';
import { CLIENT_OPERATIONS_FILE, clientOperationsSource } from '../../scripts/generate-client.js';

it('client/lib/operations.ts is what `npm run generate` writes from the registry now', async () => {
  expect(readFileSync(CLIENT_OPERATIONS_FILE, 'utf8')).toBe(await clientOperationsSource());
});
