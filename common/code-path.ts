// Where this repository's own files are at run time. The processes run in one of two
// layouts: from source (TypeScript through tsx, as `npm start` and the tests run them) or
// compiled (`npm run build`: JavaScript under dist/, as production runs them). Imports
// follow either layout by themselves; a file reached by its path does not, such as the
// workflow bundle's entry and interceptor modules, or the workflow sources hashed for the
// bundle cache. Naming those through codePath keeps a compiled worker on the compiled
// files, which are the ones a production image is sure to hold.
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const HERE = fileURLToPath(import.meta.url);

/** True when this process runs the compiled JavaScript: this very module is then a .js file. */
export const COMPILED = HERE.endsWith('.js');

/** The folder that holds workflows/, worker/, common/...: the repository root, or dist/ once compiled. */
const CODE_ROOT = join(dirname(HERE), '..');

/**
 * Where package.json and node_modules are, in both layouts. tsconfig.build.json writes the
 * compiled tree one level down (dist/), so its parent is the root.
 */
export const PACKAGE_ROOT = COMPILED ? join(CODE_ROOT, '..') : CODE_ROOT;

/**
 * The file at `path`, written from the repository root as in the source
 * (`workflows/index.ts`), in the layout that runs: `dist/workflows/index.js` once compiled.
 * A folder (`workflows/`) names its compiled twin, trailing slash kept.
 */
export function codePath(path: string): string {
  return join(CODE_ROOT, COMPILED ? path.replace(/\.ts$/, '.js') : path);
}

/**
 * The package names a team's own folder imports (package.json `exports`), and the module
 * each is in the layout that runs: the worker's bundler and the API's and worker's loader
 * map them, so a folder anywhere on disk imports them without an install of its own.
 */
export const PACKAGE_SUBPATHS: Readonly<Record<string, string>> = {
  'retrysafe-server/define': codePath('workflows/define.ts'),
  'retrysafe-server/keyed-service': codePath('downstream/shared/keyed-service.ts'),
};
