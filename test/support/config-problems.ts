// What a config loader refused: its ConfigError's lines, one per bad variable. A loader
// that accepts, or throws anything else, fails the test.
import { expect } from 'vitest';
import { ConfigError } from '../../common/env.js';

export function problemsOf(load: () => unknown): string[] {
  try {
    load();
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as ConfigError).problems;
  }
  throw new Error('expected a ConfigError');
}
