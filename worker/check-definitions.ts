// `npm run check-definitions -- --operations <folder>`: before a changed definition is
// deployed, say what the change means for the operations in flight.
//
//   the folder's definitions (and the built-in ones) ─▶ the version each new operation would run
//   the open operations of the task queue, by version ─▶ which keep an older definition
//   what a worker started with that folder would have ─▶ whether every open operation can run there
//
// Nothing is changed. Exit 0: every open operation can finish on a worker with this folder
// (those on an older version keep it); 1: some need a service or activity such a worker
// lacks (they are named); 2: bad arguments or configuration. Reads the standard TEMPORAL_*
// variables, RETRYSAFE_TASK_QUEUE, RETRYSAFE_SERVICES and RETRYSAFE_SETTINGS, as the worker
// and the API do.
import { parseArgs } from 'node:util';
import { Client, Connection } from '@temporalio/client';
import { stepActivityNames } from '../activities/index.js';
import { ConfigError } from '../common/env.js';
import { loadOperationActivities, loadOperations } from '../common/definition-folders.js';
import { builtInCatalog } from '../workflows/catalog.js';
import { parseSettingOverrides, programsOf } from '../common/programs.js';
import { loadTemporalSettings } from '../common/temporal.js';
import type { ProgramNeeds } from '../workflows/program.js';
import { serviceUrls } from './config.js';
import { definitionsReport, describeReport } from './definitions-report.js';
import { openOperations } from './open-operations.js';

const USAGE = `usage: npm run check-definitions -- --operations <folder>[,<folder>...] [--task-queue <name>] [--json]

Says, for the operations folder(s) given, which version of each definition new operations
would run, which open operations keep an older one, and whether a worker started with
that folder has every service and activity the open operations need.
Exit 0: they can all finish there; 1: some cannot (named); 2: bad arguments or configuration.`;

async function run(argv: readonly string[]): Promise<number> {
  let args;
  try {
    args = parseArgs({
      args: [...argv],
      options: {
        operations: { type: 'string', multiple: true },
        'task-queue': { type: 'string' },
        json: { type: 'boolean' },
        help: { type: 'boolean' },
      },
      allowPositionals: false,
      strict: true,
    }).values;
  } catch (err) {
    console.error(`check-definitions: ${(err as Error).message}\n${USAGE}`);
    return 2;
  }
  if (args.help) {
    console.log(USAGE);
    return 0;
  }
  if (!args.operations || args.operations.length === 0) {
    console.error(`check-definitions: --operations <folder> is required\n${USAGE}`);
    return 2;
  }
  const taskQueue = args['task-queue'] ?? process.env.RETRYSAFE_TASK_QUEUE ?? 'retrysafe';
  if (!/^[\x21-\x7e]{1,200}$/.test(taskQueue)) {
    console.error('check-definitions: --task-queue must be 1-200 visible ASCII characters');
    return 2;
  }
  let versions: Map<string, string>;
  let has: ProgramNeeds;
  try {
    const env: Record<string, string | undefined> = { ...process.env, RETRYSAFE_OPERATIONS: args.operations.join(',') };
    // npm runs scripts from the package's folder; a relative folder is the caller's.
    const { catalog, modules } = await loadOperations(builtInCatalog, env, process.env.INIT_CWD ?? process.cwd());
    const programs = programsOf(catalog.all, parseSettingOverrides(env.RETRYSAFE_SETTINGS));
    versions = new Map([...programs].map(([type, program]) => [type, program.version]));
    has = {
      services: [...serviceUrls(env.RETRYSAFE_SERVICES).keys()],
      activities: stepActivityNames(await loadOperationActivities(modules, env)),
    };
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    console.error(`check-definitions: ${err.problems.join('\n  ')}`);
    return 2;
  }
  const temporal = loadTemporalSettings();
  const connection = await Connection.connect(temporal.connectionOptions);
  try {
    const open = await openOperations(new Client({ connection, namespace: temporal.namespace }), taskQueue, {
      types: [...versions.keys()],
    });
    const report = definitionsReport(taskQueue, versions, open, has);
    console.log(args.json ? JSON.stringify(report, null, 2) : describeReport(report));
    return report.unrunnable.length === 0 ? 0 : 1;
  } finally {
    await connection.close();
  }
}

run(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(err);
    process.exit(2);
  },
);
