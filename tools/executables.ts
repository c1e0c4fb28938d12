// Whether a file can be run, and where a command is on PATH: what the installers of the
// pinned tools (tools/temporal-cli.ts, test/support/temporal-test-server.ts) check before installing one.
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';

export function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** The first executable `name` in a folder of PATH, if any. */
export function onPath(name: string): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (dir && isExecutable(join(dir, name))) return join(dir, name);
  }
  return undefined;
}
