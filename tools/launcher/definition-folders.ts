// Operations defined outside retrysafe's source folders, for `npm start -- --operations
// <folder>` (or RETRYSAFE_OPERATIONS): where they are, and what they need from the stack.
// The API and the worker load the folders themselves (common/definition-folders.ts); the launcher
// hands both the same absolute paths, and before anything starts it loads the definitions
// once, so a folder or a definition that is wrong is refused in one clear line, and checks
// that the worker has a base URL (RETRYSAFE_SERVICES) for every service their declared
// calls name: without one the worker would refuse to start, three times, after Temporal.
import { existsSync, statSync } from 'node:fs';
import { connect } from 'node:net';
import { join, relative, resolve } from 'node:path';
import { ConfigError } from '../../common/env.js';
import { loadOperations } from '../../common/definition-folders.js';
import { parseServiceUrls, serviceUrls } from '../../worker/config.js';
import { builtInCatalog } from '../../workflows/catalog.js';

/** A folder of operations, as the user named it and as every child is given it. */
export interface OperationFolder {
  given: string;
  dir: string;
}

/** What the outside folders add to the stack: the banner's rows, the worker's services. */
export interface OutsideOperations {
  /** Types beyond the built-in ones, with their collections. */
  operations: { type: string; plural: string }[];
  /** Services their declared calls name (the sandboxes aside), with the worker's base URL for each. */
  services: { name: string; url: string }[];
}

/** Services the launcher starts itself and gives the worker by their own variables. */

/**
 * The folders of RETRYSAFE_OPERATIONS and of each `--operations` (either may list several,
 * comma-separated), relative ones taken from `base`; each must be a folder holding an
 * operations module. A folder named twice is loaded once.
 */
export function operationFolders(flags: readonly string[], env: string | undefined, base: string): OperationFolder[] {
  const entries = [
    ...(env ?? '')
      .split(',')
      .map((p) => p.trim())
      .filter((p) => p !== '')
      .map((given) => ({ given, source: `RETRYSAFE_OPERATIONS (${given})` })),
    ...flags.flatMap((flag) => flag.split(',').map((p) => ({ given: p.trim(), source: `--operations ${p.trim()}` }))),
  ];
  const problems: string[] = [];
  const folders = new Map<string, OperationFolder>();
  for (const { given, source } of entries) {
    if (given === '') {
      problems.push('--operations needs a folder, e.g. --operations examples/shipping');
      continue;
    }
    const dir = resolve(base, given);
    if (!existsSync(dir) || !statSync(dir).isDirectory()) {
      problems.push(`${source}: not a folder (${dir})`);
      continue;
    }
    if (!['operations.ts', 'operations.js'].some((f) => existsSync(join(dir, f)) && statSync(join(dir, f)).isFile())) {
      problems.push(`${source}: the folder has no operations.ts (it exports \`operations\`; see examples/shipping)`);
      continue;
    }
    if (!folders.has(dir)) folders.set(dir, { given, dir });
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return [...folders.values()];
}

/**
 * Loads the folders' definitions as the API and the worker will, and checks that every
 * service their declared calls name has a base URL in `env.RETRYSAFE_SERVICES`. A
 * malformed RETRYSAFE_SERVICES is left to the worker's own config check, which names it.
 */
export async function checkOutsideOperations(
  folders: readonly OperationFolder[],
  env: Record<string, string | undefined>,
): Promise<OutsideOperations> {
  if (folders.length === 0) return { operations: [], services: [] };
  const { catalog } = await loadOperations(builtInCatalog, {
    RETRYSAFE_OPERATIONS: folders.map((f) => f.dir).join(','),
  });
  const operations = catalog.all.filter((d) => !builtInCatalog.has(d.type)).map((d) => ({ type: d.type, plural: d.plural }));
  let urls: Map<string, string>;
  try {
    urls = parseServiceUrls(env.RETRYSAFE_SERVICES);
  } catch (err) {
    if (err instanceof ConfigError) return { operations, services: [] };
    throw err;
  }
  // The services the launcher runs itself (the sandboxes, the worker's defaults) need no URL from the user.
  const defaults = serviceUrls(undefined);
  const needed = catalog.declaredServices.filter((s) => !defaults.has(s));
  const missing = needed.filter((s) => !urls.has(s));
  if (missing.length > 0) {
    const from = folders.map((f) => f.given).join(', ');
    throw new ConfigError(
      missing.map(
        (s) =>
          `the operations of ${from} call the service ${s}, which has no base URL: set RETRYSAFE_SERVICES=${s}=http://<host>:<port>`,
      ),
    );
  }
  return { operations, services: needed.map((name) => ({ name, url: urls.get(name)! })) };
}

/** The service's origin, for the banner: a base URL's path or credentials are not printed. */
export function displayOrigin(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return '(unparsable URL)';
  }
}

/** Whether something accepts a TCP connection at the URL's host and port within `timeoutMs`. */
export function answers(url: string, timeoutMs = 1_000): Promise<boolean> {
  let target: URL;
  try {
    target = new URL(url);
  } catch {
    return Promise.resolve(false);
  }
  const port = Number(target.port || (target.protocol === 'https:' ? 443 : 80));
  const host = target.hostname.replace(/^\[|\]$/g, '');
  return new Promise((done) => {
    const socket = connect({ host, port });
    const finish = (ok: boolean) => {
      socket.destroy();
      done(ok);
    };
    socket.setTimeout(timeoutMs, () => finish(false));
    socket.once('connect', () => finish(true));
    socket.once('error', () => finish(false));
  });
}

/** A folder as the banner shows it: relative to the repository when it is inside. */
export function displayFolder(folder: OperationFolder, root: string): string {
  const rel = relative(root, folder.dir);
  return rel && !rel.startsWith('..') ? rel : folder.dir;
}
