#!/usr/bin/env node
// The `retrysafe` bin (package.json "bin"): registers tsx's ESM loader in this process and
// runs the TypeScript entry point, so `npx retrysafe` needs no build step and stays one
// process (the tsx CLI would fork a child).
import { register } from 'tsx/esm/api';

register();
await import('./main.ts');
