// What a team's own keyed service imports, as `retrysafe-server/keyed-service`: the frame
// the sandboxes are built on (an app with its problem details, its keyed routes, fault
// injection, settings from the environment, a clean stop), so a service a declared step
// calls keeps the same contract without copying it. `Type` (the schema builder) and the
// SQLite types come from here, so the service's folder needs no install of its own beyond
// `npm i <path to retrysafe>`.
export { Type, type Static } from 'typebox';
export type { default as Database } from 'better-sqlite3';
export { Problem } from '../../common/http/problem.js';
export { createSandboxApp, type SandboxDeps } from './app.js';
export type { SandboxApp } from './http.js';
export type { EffectResponse } from './idempotency.js';
export { refusal, registerKeyedActions, registerKeyedEffect, registerKeyedRead } from './keyed-routes.js';
export { loadSandboxConfig, runSandbox, type SandboxConfig } from './service.js';
