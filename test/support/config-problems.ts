// What a config loader refused: its ConfigError's lines, one per bad variable. A loader
// that accepts, or throws anything else, fails the test.
import { expect } from 'vitest';
import { ConfigError } from '../../common/env.js';

function problemsIn(err: unknown): string[] {
  expect(err).toBeInstanceOf(ConfigError);
  return (err as ConfigError).problems;
}

export function problemsOf(load: () => unknown): string[] {
  try {
    load();
  } catch (err) {
    return problemsIn(err);
  }
  throw new Error('expected a ConfigError');
}

/** The same for a check that answers later (one that loads files, or asks a service). */
export async function problemsOfAsync(load: () => Promise<unknown>): Promise<string[]> {
  const settled = await load().then(
    () => new Error('expected a ConfigError'),
    (err: unknown) => err,
  );
  return problemsIn(settled);
}
