// A part a test file starts once, in its beforeAll, and stops in its afterAll: what it
// returns stands for the part from the first test on (every property is the started
// part's), so a suite names the part once instead of a `let`, a beforeAll and an afterAll.
import { afterAll, beforeAll } from 'vitest';

export function useForFile<T extends object>(what: string, start: () => Promise<T>, stop: (part: T) => Promise<void>): T {
  let part: T | undefined;
  beforeAll(async () => {
    part = await start();
  });
  afterAll(async () => {
    if (part) await stop(part);
  });
  return new Proxy({} as T, {
    get(_, property) {
      if (!part) throw new Error(`${what} is used before its beforeAll started it`);
      return Reflect.get(part, property, part);
    },
  });
}
