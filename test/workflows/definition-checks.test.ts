// Before a changed definition runs, what the open operations need is checked twice:
//
// - a worker about to start refuses, naming them, open operations whose recorded definition
//   needs a service or an activity it does not have (here: their shipment's service, which
//   the changed folder no longer calls and the worker is not given), and its own folder's
//   steps that name an activity no activities.ts registers (a typo shows at start, not when
//   the step runs);
// - `npm run check-definitions -- --operations <folder>` says which version new operations
//   of each type would run, which open ones keep an older version, and refuses (exit 1) a
//   folder whose worker could not run them all.
//
// The open operations are started exactly as the API starts them, on a task queue no worker
// polls, so they stay open.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { fingerprint } from '../../client/api/fingerprint.js';
import { workflowStartOptions } from '../../client/api/start-options.js';
import { loadOperations } from '../../common/definition-folders.js';
import { builtInCatalog } from '../../workflows/catalog.js';
import { programFor } from '../../common/programs.js';
import { operationRef } from '../../workflows/identity.js';
import { ROOT } from '../launcher/harness.js';
import { uniqueId } from '../support/stack.js';
import { writeParcelFolder } from './parcel-folder.js';

const root = mkdtempSync(join(tmpdir(), 'retrysafe-checks-'));
const before = join(root, 'before');
const after = join(root, 'after');
const taskQueue = uniqueId('nobody');
let connection: Connection;
let openVersion = '';

function env(extra: Record<string, string> = {}) {
  return {
    ...Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^(VITEST|RETRYSAFE_|TEMPORAL_)/.test(k))),
    TEMPORAL_ADDRESS: inject('temporalAddress'),
    RETRYSAFE_TASK_QUEUE: taskQueue,
    WORKER_METRICS_ADDRESS: 'off',
    LOG_PRETTY: '0',
    ...extra,
  } as Record<string, string>;
}

const run = (entry: string, args: string[], extra: Record<string, string> = {}) =>
  execa(process.execPath, ['--import', 'tsx', entry, ...args], {
    cwd: ROOT,
    env: env(extra),
    extendEnv: false,
    reject: false,
    timeout: 120_000,
  });

beforeAll(async () => {
  writeParcelFolder(before, true);
  writeParcelFolder(after, false);
  connection = await Connection.connect({ address: inject('temporalAddress') });
  const client = new Client({ connection, namespace: 'default' });
  const { catalog } = await loadOperations(builtInCatalog, { RETRYSAFE_OPERATIONS: before });
  const parcel = catalog.get('parcel')!;
  const program = programFor(parcel);
  openVersion = program.version;
  for (const key of ['p1', 'p2']) {
    const request = { account: 'acc_alice', amount: 100, currency: 'EUR' };
    const claim = { type: 'parcel', fingerprint: fingerprint('parcel', request), request };
    const settings = { stepDeadlineMs: 60_000, attentionAfterMs: 300_000 };
    await client.workflow.start(
      'parcel',
      workflowStartOptions(parcel, program, operationRef('default', `${taskQueue}-${key}`), claim, settings, taskQueue),
    );
  }
});

afterAll(async () => {
  const client = new Client({ connection, namespace: 'default' });
  for (const key of ['p1', 'p2'])
    await client.workflow
      .getHandle(`default/${taskQueue}-${key}`)
      .terminate('test over')
      .catch(() => undefined);
  await connection?.close();
  rmSync(root, { recursive: true, force: true });
});

describe('before a changed definition runs', () => {
  it('a worker refuses to start, naming them, while open operations need a service it lacks', async () => {
    const refused = await run('worker/main.ts', [], { RETRYSAFE_OPERATIONS: after });
    expect(refused.exitCode, refused.all).not.toBe(0);
    const said = `${refused.stdout}\n${refused.stderr}`;
    expect(said).toContain(`open operations on task queue ${taskQueue} need what this worker lacks`);
    expect(said).toContain(`2 open parcel operation(s) on definition ${openVersion}`);
    expect(said).toMatch(/need service shipping \(no base URL in RETRYSAFE_SERVICES\)/);
  });

  it('a worker refuses to start, naming it, when a step of its folder names an activity no activities.ts registers', async () => {
    const typo = join(root, 'typo');
    mkdirSync(typo);
    writeFileSync(
      join(typo, 'operations.ts'),
      `import { defineOperation, RequestBody, Type } from 'retrysafe-server/define';
export const operations = [
  defineOperation({
    type: 'weighing',
    plural: 'weighings',
    description: 'weigh a parcel',
    request: RequestBody('a parcel', { grams: Type.Integer() }),
    steps: [{ name: 'weigh', keySuffix: 'weigh', service: 'scales', call: { kind: 'activity', activity: 'weighParcel', input: { grams: 'grams' } }, businessErrors: {} }],
    unavailableCode: 'scales_unavailable',
  }),
];
`,
    );
    // Registered under another name than the step calls.
    writeFileSync(join(typo, 'activities.ts'), `export const createActivities = () => ({ weighParcels: async () => ({}) });\n`);
    const refused = await run('worker/main.ts', [], { RETRYSAFE_OPERATIONS: typo });
    expect(refused.exitCode, refused.all).not.toBe(0);
    expect(`${refused.stdout}\n${refused.stderr}`).toContain(
      'no activities.ts of RETRYSAFE_OPERATIONS registers the activity weighParcel, which an operation calls',
    );
  });

  it('check-definitions says the new version, the open operations that keep theirs, and refuses a worker that could not run them', async () => {
    const refused = await run('worker/check-definitions.ts', ['--operations', after, '--json']);
    expect(refused.exitCode, refused.stderr).toBe(1);
    const report = JSON.parse(refused.stdout) as {
      taskQueue: string;
      types: Array<{ type: string; version: string; open: Array<{ version: string; count: number; current: boolean }> }>;
      unrunnable: string[];
    };
    const parcel = report.types.find((t) => t.type === 'parcel')!;
    expect(parcel.version).not.toBe(openVersion);
    expect(parcel.open).toEqual([{ version: openVersion, count: 2, current: false }]);
    expect(report.unrunnable).toEqual([expect.stringContaining('need service shipping')]);

    // Given the service, a worker with the changed folder can finish them on their own definition.
    const fine = await run('worker/check-definitions.ts', ['--operations', after], {
      RETRYSAFE_SERVICES: 'shipping=http://127.0.0.1:4003',
    });
    expect(fine.exitCode, fine.stderr).toBe(0);
    expect(fine.stdout).toContain(
      `parcel: new operations run definition ${parcel.version} (changed: 2 open on ${openVersion}, which they keep)`,
    );
    expect(fine.stdout).toContain('every open operation can finish on a worker with these definitions');
  });

  it.each([
    [[], /--operations <folder> is required/],
    [['--operations'], /argument missing|requires a value|--operations <value>/],
    [['--operations', before, '--frobnicate'], /Unknown option '--frobnicate'/],
    [['--operations', join(root, 'nope')], /is not a folder/],
    [['--operations', before, '--task-queue', 'has space'], /--task-queue must be 1-200 visible ASCII characters/],
  ])('check-definitions refuses bad arguments (%j) with exit 2 and a line saying why', async (args, why) => {
    const result = await run('worker/check-definitions.ts', args);
    expect(result.exitCode, result.stdout).toBe(2);
    expect(result.stderr).toMatch(why);
  });
});
