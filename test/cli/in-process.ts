// The CLI (or the demo's command line) run in the test's own process, its output captured:
// for the many cheap cases (usage errors, answers of a scripted API) where a process per
// case would only add time.
import { vi } from 'vitest';
import { runCli } from '../../client/cli/program.js';

export interface HereRun {
  exitCode: number;
  stdout: string;
  stderr: string;
}

/** Runs `args` through `run` (the CLI's runCli unless told; the demo's runDemoCli is another). */
export async function runHere(args: string[], run: (argv: string[]) => Promise<number> = runCli): Promise<HereRun> {
  let stdout = '';
  let stderr = '';
  const out = vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => ((stdout += String(chunk)), true));
  const err = vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => ((stderr += String(chunk)), true));
  try {
    const exitCode = await run(args);
    return { exitCode, stdout, stderr };
  } finally {
    out.mockRestore();
    err.mockRestore();
  }
}

/** `retrysafe pay` of the README's payment, under `key`: the command line the CLI prints back for a retry. */
export const alicePays = (key: string): string[] =>
  `pay --account acc_alice --amount 1250 --currency EUR --key ${key}`.split(' ');
