import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../common/env.js';
import { loadBankConfig } from '../../downstream/bank/config.js';

describe('bank config', () => {
  it('has working defaults', () => {
    expect(loadBankConfig({})).toEqual({
      host: '127.0.0.1',
      port: 4001,
      dbPath: '.data/bank.db',
      keyTtlMs: 7 * 24 * 3600_000,
      faults: false,
      logLevel: 'info',
    });
  });

  it('reads every variable', () => {
    expect(
      loadBankConfig({
        BANK_HOST: '0.0.0.0',
        BANK_PORT: '0',
        BANK_DB: '/tmp/b.db',
        KEY_TTL: '10m',
        SANDBOX_FAULTS: '1',
        LOG_LEVEL: 'debug',
      }),
    ).toEqual({ host: '0.0.0.0', port: 0, dbPath: '/tmp/b.db', keyTtlMs: 600_000, faults: true, logLevel: 'debug' });
  });

  it.each([
    ['BANK_PORT', 'abc'],
    ['BANK_PORT', '70000'],
    ['KEY_TTL', 'soon'],
    ['KEY_TTL', '10ms'],
    ['SANDBOX_FAULTS', 'maybe'],
    ['LOG_LEVEL', 'loud'],
  ])('%s=%s is a ConfigError naming the variable', (name, value) => {
    let error: unknown;
    try {
      loadBankConfig({ [name]: value });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).problems).toEqual([expect.stringContaining(`${name}="${value}"`)]);
  });

  it('lists every bad variable at once', () => {
    expect(() => loadBankConfig({ BANK_PORT: 'abc', KEY_TTL: 'soon' })).toThrow(/BANK_PORT="abc"[\s\S]*KEY_TTL="soon"/);
  });
});
