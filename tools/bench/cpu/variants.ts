// A variant's checkout on disk: the folder named, or a git revision unpacked under
// .data/cpu-variants/ beside this repository's node_modules; compiled first when it runs
// from dist/.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, symlinkSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { ROOT } from '../stack.js';
import { log } from './log.js';
import type { VariantSpec } from './options.js';

/** The folder a variant runs from: the folder named, or the revision unpacked beside the repository's own dependencies. */
export function materialise(spec: VariantSpec): string {
  const asFolder = resolve(ROOT, spec.source);
  let root = asFolder;
  if (!existsSync(join(asFolder, 'package.json'))) {
    const git = (...args: string[]) => execFileSync('git', args, { cwd: ROOT, encoding: 'utf8' }).trim();
    const sha = git('rev-parse', '--verify', `${spec.source}^{commit}`);
    root = join(ROOT, '.data', 'cpu-variants', sha.slice(0, 12));
    if (!existsSync(join(root, 'package.json'))) {
      mkdirSync(root, { recursive: true });
      execFileSync('sh', ['-c', `git archive ${sha} | tar -x -C '${root}'`], { cwd: ROOT });
      symlinkSync(join(ROOT, 'node_modules'), join(root, 'node_modules'));
    }
    log(`variant ${spec.name}: ${spec.source} (${sha.slice(0, 12)}) in ${root}`);
  }
  if (spec.compiled) {
    log(`variant ${spec.name}: compiling (tsc -p tsconfig.build.json)`);
    rmSync(join(root, 'dist'), { recursive: true, force: true });
    execFileSync(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json'], { cwd: root });
  }
  return root;
}
