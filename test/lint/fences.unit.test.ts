// The folder fences of eslint.config.mjs, tried on imports written for the purpose: each
// forbidden crossing fails `npm run lint` with its fence's message, and the named surface
// the tooling may use passes. The files are linted as text under the paths given, so
// nothing is written into the tree.
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const eslint = new ESLint({ cwd: ROOT });

async function importErrors(filePath: string, specifier: string): Promise<string[]> {
  // An ignored path would lint to nothing, and every "may import" would pass on it.
  expect(await eslint.isPathIgnored(join(ROOT, filePath)), filePath).toBe(false);
  const [result] = await eslint.lintText(`import '${specifier}';\n`, { filePath });
  return result!.messages.filter((m) => m.ruleId === 'no-restricted-imports').map((m) => m.message);
}

describe('folder fences', () => {
  it.each([
    ['common/x.ts', '../tools/dev-server.js', 'tooling'],
    ['common/x.ts', '../workflows/catalog.js', 'ground floor'],
    ['common/tracing/x.ts', '../../workflows/definitions/payment.js', 'ground floor'],
    ['activities/x.ts', '../client/api/app.js', 'the API'],
    ['worker/x.ts', '../test/support/stack.js', 'the tests'],
    ['client/api/x.ts', '../../worker/create.js', 'the worker'],
    ['client/lib/x.ts', '../../common/env.js', 'published on its own'],
    ['downstream/bank/x.ts', '../../workflows/saga.js', 'only the key grammar'],
    ['tools/bench/x.ts', '../../workflows/saga.js', 'named surface'],
    ['tools/x.ts', '../activities/http.js', 'named surface'],
    ['tools/chaos/x.ts', '../../client/api/routes/operations.js', 'named surface'],
    ['tools/demo/x.ts', '../../client/cli/commands.js', 'named surface'],
    ['tools/bench/x.ts', '../../worker/bundle.js', 'named surface'],
    ['tools/x.ts', '../workflows/fields.js', 'named surface'],
    ['workflows/x.ts', '../tools/dev-server.js', 'deterministic'],
  ])('%s may not import %s', async (file, specifier, message) => {
    const errors = await importErrors(file, specifier);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toContain(message);
  });

  it.each([
    ['tools/bench/x.ts', '../../workflows/catalog.js'],
    ['tools/chaos/x.ts', '../../workflows/definitions/transfer.js'],
    ['tools/x.ts', '../common/env.js'],
    ['tools/x.ts', '../activities/index.js'],
    ['tools/x.ts', '../client/api/app.js'],
    ['tools/x.ts', '../downstream/shared/faults.js'],
    ['tools/demo/x.ts', '../../client/cli/args.js'],
    ['tools/demo/x.ts', '../../client/lib/index.js'],
    ['downstream/bank/x.ts', '../../workflows/identity.js'],
    ['worker/x.ts', '../common/resource.js'],
    ['common/x.ts', '../workflows/definition.js'],
    ['test/x.unit.test.ts', '../tools/bench/stack.js'],
  ])('%s may import %s', async (file, specifier) => {
    expect(await importErrors(file, specifier)).toEqual([]);
  });
});
