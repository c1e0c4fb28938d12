#!/usr/bin/env node
// The `retrysafe` command. An installed package holds only the compiled CLI (dist/). In a
// checkout of the repository the TypeScript source sits beside this file and runs through
// tsx (a dependency of the repository, not of this package), so `npx retrysafe` there
// always runs the code as it is now, with no build to forget.
import { existsSync } from 'node:fs';

const source = new URL('../cli/main.ts', import.meta.url);
if (existsSync(source)) {
  const { register } = await import('tsx/esm/api');
  register();
  await import(source.href);
} else {
  await import('../dist/cli/main.js');
}
