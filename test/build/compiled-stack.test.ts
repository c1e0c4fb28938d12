// The production build: `npm run build` compiles the API, the worker and the sandboxes to
// JavaScript under dist/, and those files, run as processes on Node alone (no tsx), make a
// payment on the shared dev server. The worker finds its workflows by path, so this is
// where a path that only exists in the source layout would show.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { execa } from 'execa';
import { beforeAll, describe, expect, it } from 'vitest';
import * as sourceLayout from '../../common/code-path.js';
import { useFullStack } from '../support/full-stack.js';
import { uniqueId } from '../support/stack.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

// Registered before the stack's own beforeAll, so it runs first: the stack starts dist/.
// Without tsc's type check, which `npm test` has just run over the same files (and more):
// twice the CPU for nothing on a busy machine.
beforeAll(async () => {
  await execa('npm', ['run', 'build', '--', '--noCheck'], { cwd: ROOT });
});

const stack = useFullStack({
  name: 'compiled',
  compiled: true,
  sandboxes: 'process',
  worker: 'process',
  api: 'process',
  faults: false,
});

const PARTS = [
  ['api', 'dist/client/api/server.js'],
  ['worker', 'dist/worker/main.js'],
  ['bank', 'dist/downstream/bank/server.js'],
  ['reservations', 'dist/downstream/reservations/server.js'],
] as const;

describe('the compiled build (npm run build, dist/)', () => {
  it('runs each part from its compiled entry on Node alone, without tsx', async () => {
    for (const [part, entry] of PARTS) {
      const pid = stack.pid(part);
      expect(pid, part).toBeTypeOf('number');
      const { stdout: argv } = await execa('ps', ['-o', 'args=', '-p', String(pid)]);
      expect(argv, part).toContain(entry);
      expect(argv, part).not.toMatch(/\btsx\b/);
    }
  });

  it('charges once for a payment sent twice through the compiled API and worker', async () => {
    const account = uniqueId('acc');
    await stack.bank.openAccount(account, 10_000);
    const key = uniqueId('order');
    const pay = () =>
      stack.api.request('POST', '/v1/payments', {
        body: { account, amount: 1250, currency: 'EUR' },
        headers: { 'idempotency-key': key, prefer: 'wait=30' },
      });

    const first = await pay();
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({
      key,
      type: 'payment',
      status: 'succeeded',
      steps: [{ name: 'charge_payment', status: 'completed', downstreamKey: `default/${key}/charge` }],
    });
    const second = await pay();
    expect(second.status).toBe(200);
    expect(second.headers.get('idempotent-replayed')).toBe('true');
    expect(second.body).toEqual(first.body);

    expect(await stack.bank.balance(account)).toBe(8_750);
    const charge = await stack.bank.charge(`default/${key}/charge`);
    expect(charge.body).toMatchObject({
      chargeId: (first.body.result as { chargeId: string }).chargeId,
      amount: 1250,
      status: 'captured',
    });
  });

  it('names files loaded by path in the layout that runs, and keeps caches in the root node_modules', async () => {
    const compiled = (await import(pathToFileURL(join(ROOT, 'dist/common/code-path.js')).href)) as typeof sourceLayout;
    expect(compiled.COMPILED).toBe(true);
    expect(compiled.PACKAGE_ROOT).toBe(join(ROOT, '.'));
    expect(compiled.codePath('workflows/index.ts')).toBe(join(ROOT, 'dist/workflows/index.js'));
    expect(compiled.codePath('workflows/')).toBe(join(ROOT, 'dist/workflows/'));
    expect(existsSync(compiled.codePath('workflows/cancellation.ts'))).toBe(true);

    expect(sourceLayout.COMPILED).toBe(false);
    expect(sourceLayout.PACKAGE_ROOT).toBe(join(ROOT, '.'));
    expect(sourceLayout.codePath('workflows/index.ts')).toBe(join(ROOT, 'workflows/index.ts'));
  });
});
