import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../common/env.js';
import { loadReservationsConfig } from '../../downstream/reservations/config.js';

describe('reservations config', () => {
  it('has working defaults', () => {
    expect(loadReservationsConfig({})).toEqual({
      host: '127.0.0.1',
      port: 4002,
      dbPath: '.data/reservations.db',
      keyTtlMs: 7 * 24 * 3600_000,
      faults: false,
      logLevel: 'info',
    });
  });

  it('reads every variable', () => {
    expect(
      loadReservationsConfig({
        RESERVATIONS_HOST: '0.0.0.0',
        RESERVATIONS_PORT: '0',
        RESERVATIONS_DB: '/tmp/r.db',
        KEY_TTL: '10m',
        SANDBOX_FAULTS: '1',
        LOG_LEVEL: 'debug',
      }),
    ).toEqual({ host: '0.0.0.0', port: 0, dbPath: '/tmp/r.db', keyTtlMs: 600_000, faults: true, logLevel: 'debug' });
  });

  it('ignores the bank’s variables', () => {
    expect(loadReservationsConfig({ BANK_PORT: '1', BANK_DB: '/tmp/b.db' })).toMatchObject({
      port: 4002,
      dbPath: '.data/reservations.db',
    });
  });

  it.each([
    ['RESERVATIONS_PORT', 'abc'],
    ['RESERVATIONS_PORT', '70000'],
    ['KEY_TTL', 'soon'],
    ['KEY_TTL', '10ms'],
    ['SANDBOX_FAULTS', 'maybe'],
    ['LOG_LEVEL', 'loud'],
  ])('%s=%s is a ConfigError naming the variable', (name, value) => {
    let error: unknown;
    try {
      loadReservationsConfig({ [name]: value });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).problems).toEqual([expect.stringContaining(`${name}="${value}"`)]);
  });

  it('lists every bad variable at once', () => {
    expect(() => loadReservationsConfig({ RESERVATIONS_PORT: 'abc', KEY_TTL: 'soon' })).toThrow(
      /RESERVATIONS_PORT="abc"[\s\S]*KEY_TTL="soon"/,
    );
  });
});
