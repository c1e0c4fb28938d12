// Schemathesis (PyPI) for the schema-driven fuzz: pinned, installed on first use into a
// git-ignored venv under .tools/ (test/support/python-tool.ts).
import { ensurePythonTool, runTool, type ToolRun } from '../support/python-tool.js';

/** Pinned: the latest release when this was written; it supports Python ≥ 3.10. */
export const SCHEMATHESIS_VERSION = '4.32.5';

/** Path of the pinned schemathesis executable, installing it when missing or broken. */
export function ensureSchemathesis(): string {
  return ensurePythonTool({ name: 'schemathesis', version: SCHEMATHESIS_VERSION, neededBy: 'The schema fuzz' }).bin;
}

export type FuzzRun = ToolRun;

/** Runs schemathesis in `cwd`, where its crash cache (.schemathesis/) goes, not into the work tree. */
export function runSchemathesis(bin: string, args: string[], timeoutMs: number, cwd: string): Promise<FuzzRun> {
  return runTool(bin, args, { timeoutMs, cwd });
}
