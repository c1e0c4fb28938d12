// Both sandboxes read the same settings under their own prefix: defaults that work, every
// variable read, and every bad value refused by name, all at once.
import { describe, expect, it } from 'vitest';
import { problemsOf } from '../support/config-problems.js';
import { SANDBOXES } from './kinds.js';

describe.each(SANDBOXES)('$name config', (kind) => {
  const PORT = `${kind.prefix}_PORT`;

  it('has working defaults', () => {
    expect(kind.loadConfig({})).toEqual({
      host: '127.0.0.1',
      port: kind.defaults.port,
      dbPath: kind.defaults.db,
      keyTtlMs: 7 * 24 * 3600_000,
      faults: false,
      logLevel: 'info',
    });
  });

  it('reads every variable', () => {
    expect(
      kind.loadConfig({
        [`${kind.prefix}_HOST`]: '0.0.0.0',
        [PORT]: '0',
        [`${kind.prefix}_DB`]: '/tmp/s.db',
        KEY_TTL: '10m',
        SANDBOX_FAULTS: '1',
        LOG_LEVEL: 'debug',
      }),
    ).toEqual({ host: '0.0.0.0', port: 0, dbPath: '/tmp/s.db', keyTtlMs: 600_000, faults: true, logLevel: 'debug' });
  });

  it('ignores the other sandbox’s variables', () => {
    const other = SANDBOXES.find((k) => k !== kind)!;
    expect(kind.loadConfig({ [`${other.prefix}_PORT`]: '1', [`${other.prefix}_DB`]: '/tmp/o.db' })).toMatchObject({
      port: kind.defaults.port,
      dbPath: kind.defaults.db,
    });
  });

  it.each([
    [PORT, 'abc'],
    [PORT, '70000'],
    ['KEY_TTL', 'soon'],
    ['KEY_TTL', '10ms'],
    ['SANDBOX_FAULTS', 'maybe'],
    ['LOG_LEVEL', 'loud'],
  ])('%s=%s is a ConfigError naming the variable', (name, value) => {
    expect(problemsOf(() => kind.loadConfig({ [name]: value }))).toEqual([expect.stringContaining(`${name}="${value}"`)]);
  });

  it('lists every bad variable at once', () => {
    expect(() => kind.loadConfig({ [PORT]: 'abc', KEY_TTL: 'soon' })).toThrow(new RegExp(`${PORT}="abc"[\\s\\S]*KEY_TTL="soon"`));
  });
});
