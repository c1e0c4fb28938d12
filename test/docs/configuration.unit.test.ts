// The configuration table of docs/operating.md against what the processes really read. Each
// process's loaders (its env schema and the variables it parses by hand beside it) run on
// an environment that records every variable asked of it. A variable the table names that
// no process reads, one a process reads that the table leaves out, or a "used by" that
// names a process not reading it, fails.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { loadApiConfig } from '../../client/api/config.js';
import { loadOperations } from '../../common/definition-folders.js';
import { builtInCatalog } from '../../workflows/catalog.js';
import { TEMPORAL_CONNECTION_VARS } from '../../common/temporal.js';
import { loadBankConfig } from '../../downstream/bank/config.js';
import { loadReservationsConfig } from '../../downstream/reservations/config.js';
import { loadLauncherConfig } from '../../tools/launcher/options.js';
import { loadWorkerConfig } from '../../worker/config.js';
import { loadTracingSettings } from '../../common/tracing/config.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const read = (path: string) => readFileSync(`${ROOT}/${path}`, 'utf8');

type Env = Record<string, string | undefined>;
type Loader = (env: Env) => unknown;

/** What each process runs on its environment at start-up, by the names the table's "used by" gives them. */
const outsideOperations: Loader = (env) => loadOperations(builtInCatalog, env, ROOT);
/** Every process reads the OpenTelemetry variables first (common/tracing/start.ts). */
const tracing =
  (process: string): Loader =>
  (env) =>
    loadTracingSettings(process, env);
const PROCESSES: Record<string, Loader[]> = {
  API: [tracing('api'), loadApiConfig, outsideOperations],
  worker: [tracing('worker'), loadWorkerConfig, outsideOperations],
  bank: [tracing('bank'), loadBankConfig],
  reservations: [tracing('reservations'), loadReservationsConfig],
  launcher: [
    (env) => loadLauncherConfig(ROOT, env, { cwd: ROOT }),
    (env) => loadLauncherConfig(ROOT, env, { cwd: ROOT, cluster: true }),
  ],
};
const ALL = ['API', 'worker', 'bank', 'reservations'];

/**
 * The allowlist: variables read outside those loaders, with the file that reads each
 * (checked to still name it, so an entry cannot outlive its reader) and who reads it.
 */
const READ_ELSEWHERE: Record<string, { file: string; by: string[] }> = {
  // A display choice, read where the logger is made, in every process.
  LOG_PRETTY: { file: 'common/logger.ts', by: ALL },
  // Set-up, before any configuration: which `temporal` binary to run.
  TEMPORAL_CLI_PATH: { file: 'tools/temporal-cli.ts', by: ['set-up'] },
  // Set-up of `--traces`: which Zipkin server jar to run.
  ZIPKIN_JAR_PATH: { file: 'tools/zipkin.ts', by: ['set-up'] },
};

/**
 * Read for the API and the worker by the SDK's @temporalio/envconfig, which
 * common/temporal.ts hands the environment whole. The launcher parses the first two
 * itself (in the table); the others are documented in the prose after it.
 */
const READ_BY_ENVCONFIG = ['TEMPORAL_ADDRESS', 'TEMPORAL_NAMESPACE', ...TEMPORAL_CONNECTION_VARS];

/** Every variable the loaders ask for (all unset, so every default applies), with the processes asking. */
async function readers(): Promise<Map<string, Set<string>>> {
  const by = new Map<string, Set<string>>();
  const reader = (name: string) => by.get(name) ?? by.set(name, new Set()).get(name)!;
  for (const [process, loaders] of Object.entries(PROCESSES)) {
    const env = new Proxy({} as Env, {
      get: (_target, name) => {
        if (typeof name === 'string') reader(name).add(process);
        return undefined;
      },
    });
    for (const load of loaders) await load(env);
  }
  for (const [name, { by: processes }] of Object.entries(READ_ELSEWHERE)) for (const p of processes) reader(name).add(p);
  return by;
}

interface Row {
  names: string[];
  usedBy: string[];
}

/** The rows of the table under `## Configuration`: the variables of the first cell, the processes of the third. */
function table(markdown: string): Row[] {
  const section = markdown.split(/^## /m).find((s) => s.startsWith('Configuration\n'));
  if (section === undefined) throw new Error('docs/operating.md has no "## Configuration" section');
  return section
    .split('\n')
    .filter((line) => line.startsWith('| `'))
    .map((line) => {
      const cells = line.split('|').map((c) => c.trim());
      return {
        names: [...(cells[1] ?? '').matchAll(/`([A-Z][A-Z0-9_]*)`/g)].map((m) => m[1] as string),
        // "API → workflows": the API reads it and hands it to the workflows.
        usedBy: (cells[3] ?? '').split(',').flatMap((who) => {
          const name = who.trim().replace(/ → workflows$/, '');
          if (name === 'all') return ALL;
          return name === 'sandboxes' ? ['bank', 'reservations'] : [name];
        }),
      };
    });
}

describe('the configuration table of docs/operating.md', () => {
  const operating = read('docs/operating.md');
  const rows = table(operating);
  const documented = rows.flatMap((r) => r.names);

  it('is found, and names each variable once', () => {
    expect(documented.length).toBeGreaterThan(30);
    expect(documented.filter((name, i) => documented.indexOf(name) !== i)).toEqual([]);
  });

  it('names every variable a process reads, and none that no process reads', async () => {
    const readBy = await readers();
    const undocumented = [...readBy.keys()].filter((name) => !documented.includes(name)).sort();
    const unread = documented.filter((name) => !readBy.has(name)).sort();
    expect({ undocumented, unread }).toEqual({ undocumented: [], unread: [] });
  });

  it('says which processes read each variable (the launcher may read more: it checks what it hands its parts)', async () => {
    const readBy = await readers();
    for (const { names, usedBy } of rows) {
      for (const name of names) {
        const actual = new Set(readBy.get(name));
        if (READ_BY_ENVCONFIG.includes(name)) ['API', 'worker'].forEach((p) => actual.add(p));
        expect([...usedBy].sort(), name).toEqual([...actual].filter((p) => p !== 'launcher' || usedBy.includes(p)).sort());
      }
    }
  });

  it('each variable read outside the loaders is still read where the allowlist says', () => {
    for (const [name, { file }] of Object.entries(READ_ELSEWHERE)) expect(read(file), `${file} reads ${name}`).toContain(name);
  });

  it("documents envconfig's variables after the table", () => {
    const prose = operating.slice(operating.indexOf('## Pointing at a Temporal cluster'));
    for (const name of READ_BY_ENVCONFIG) {
      const tls = name.startsWith('TEMPORAL_TLS') && prose.includes('`TEMPORAL_TLS_*`');
      expect(prose.includes(`\`${name}\``) || tls, name).toBe(true);
    }
  });
});
