// Builds the Temporal server, its SQL schema tool and the Web UI server from the Go module
// proxy with `go install`, each pinned, into a folder named by its version under .tools/.
// A finished folder is never touched again, so a second call costs one stat; a new pin
// builds into a new folder. The build goes to a temporary folder that is renamed into
// place only when complete: an interrupted build leaves nothing that looks usable, and
// two concurrent first runs do not overwrite each other's binaries.
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export const TEMPORAL_SERVER_VERSION = '1.32.2';
export const TEMPORAL_UI_SERVER_VERSION = '2.56.4';
/** Both modules declare go 1.26.10; this is the toolchain they were proven with. */
export const GO_TOOLCHAIN = 'go1.27.3';

export interface TemporalServerBinaries {
  /** `temporal-server` (go.temporal.io/server/cmd/server). */
  server: string;
  /** `temporal-sql-tool` (go.temporal.io/server/cmd/tools/sql); carries the schema it sets up. */
  sqlTool: string;
  version: string;
}

export interface UiServerBinary {
  uiServer: string;
  version: string;
}

export interface BuildResult {
  /** False when the pinned binaries were already there. */
  built: boolean;
  ms: number;
}

interface GoPackage {
  /** Import path without the version. */
  path: string;
  /** The name the binary gets in the tools folder (go names it after the last path element). */
  name: string;
}

async function goInstall(folder: string, version: string, packages: GoPackage[]): Promise<BuildResult> {
  if (packages.every((p) => existsSync(join(folder, p.name)))) return { built: false, ms: 0 };
  const started = Date.now();
  const staging = `${folder}.tmp-${process.pid}`;
  rmSync(staging, { recursive: true, force: true });
  mkdirSync(staging, { recursive: true });
  try {
    // One `go install` for several packages of one module at one version: go resolves the
    // module graph once.
    await run('go', ['install', ...packages.map((p) => `${p.path}@v${version}`)], {
      env: { ...process.env, GOTOOLCHAIN: GO_TOOLCHAIN, GOBIN: staging },
      maxBuffer: 16 * 1024 * 1024,
    });
    for (const p of packages) renameSync(join(staging, p.path.split('/').at(-1)!), join(staging, p.name));
    writeFileSync(
      join(staging, 'BUILD.json'),
      JSON.stringify(
        {
          packages: packages.map((p) => `${p.path}@v${version}`),
          toolchain: GO_TOOLCHAIN,
          builtAt: new Date().toISOString(),
          buildMs: Date.now() - started,
        },
        null,
        2,
      ) + '\n',
    );
    try {
      renameSync(staging, folder);
    } catch (err) {
      // Another process finished the same build first: its folder is as good as ours.
      if (!packages.every((p) => existsSync(join(folder, p.name)))) throw err;
    }
  } catch (err) {
    const e = err as Error & { stderr?: string; code?: string };
    if (e.code === 'ENOENT') throw new Error('`go` is not on PATH: install Go (https://go.dev/dl) to build the Temporal server');
    throw new Error(
      `go install of ${packages.map((p) => p.path).join(', ')}@v${version} failed: ${(e.stderr ?? e.message).trim()}`,
    );
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
  return { built: true, ms: Date.now() - started };
}

export function temporalServerBinaries(root: string): TemporalServerBinaries {
  const folder = join(root, '.tools', 'temporal-server', `v${TEMPORAL_SERVER_VERSION}`);
  return {
    server: join(folder, 'temporal-server'),
    sqlTool: join(folder, 'temporal-sql-tool'),
    version: TEMPORAL_SERVER_VERSION,
  };
}

export function uiServerBinary(root: string): UiServerBinary {
  const folder = join(root, '.tools', 'temporal-ui-server', `v${TEMPORAL_UI_SERVER_VERSION}`);
  return { uiServer: join(folder, 'temporal-ui-server'), version: TEMPORAL_UI_SERVER_VERSION };
}

/** Builds temporal-server and temporal-sql-tool unless the pinned version is already there. */
export async function ensureTemporalServer(root: string): Promise<TemporalServerBinaries & BuildResult> {
  const bins = temporalServerBinaries(root);
  const result = await goInstall(join(bins.server, '..'), TEMPORAL_SERVER_VERSION, [
    { path: 'go.temporal.io/server/cmd/server', name: 'temporal-server' },
    { path: 'go.temporal.io/server/cmd/tools/sql', name: 'temporal-sql-tool' },
  ]);
  return { ...bins, ...result };
}

/**
 * Builds the Web UI server (github.com/temporalio/ui-server/v2, whose module carries the
 * built UI assets and embeds them) unless the pinned version is already there.
 */
export async function ensureUiServer(root: string): Promise<UiServerBinary & BuildResult> {
  const bin = uiServerBinary(root);
  const result = await goInstall(join(bin.uiServer, '..'), TEMPORAL_UI_SERVER_VERSION, [
    { path: 'github.com/temporalio/ui-server/v2/cmd/server', name: 'temporal-ui-server' },
  ]);
  return { ...bin, ...result };
}
