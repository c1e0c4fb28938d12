// `retrysafe/client` is the package's public entry to the client (package.json "exports").
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import * as viaPackage from 'retrysafe/client';
import * as viaPath from '../../client/lib/index.js';

describe('the retrysafe/client export', () => {
  it('resolves to the client library, with its factory and error classes', () => {
    expect(viaPackage.createClient).toBe(viaPath.createClient);
    expect(viaPackage.OperationPendingError).toBe(viaPath.OperationPendingError);
    const client = viaPackage.createClient({ baseUrl: 'http://127.0.0.1:9/' });
    expect(client).toBeInstanceOf(viaPackage.RetrySafe);
    expect(client.baseUrl).toBe('http://127.0.0.1:9');
    expect(Object.keys(viaPackage).sort()).toEqual(
      expect.arrayContaining([
        'ApiError',
        'IdempotencyConflictError',
        'OperationFailedError',
        'OperationPendingError',
        'createClient',
      ]),
    );
  });

  it('resolves for Node itself too (a script importing retrysafe/client from the repo)', async () => {
    const script =
      "const m = await import('retrysafe/client'); console.log(typeof m.createClient, m.OperationPendingError.name);";
    const child = await execa(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      cwd: new URL('../..', import.meta.url),
      reject: false,
    });
    expect(child.stderr).toBe('');
    expect(child.stdout.trim()).toBe('function OperationPendingError');
  });
});
