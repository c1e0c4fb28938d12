// The reservation service's settings, read once from the environment (see common/env.ts).
import { z } from 'zod';
import { duration, flag, logLevel, parseEnv, port } from '../../common/env.js';

const DAY = 24 * 60 * 60 * 1000;

export const reservationsEnv = {
  RESERVATIONS_HOST: z.string().default('127.0.0.1'),
  RESERVATIONS_PORT: port.default(4002),
  RESERVATIONS_DB: z.string().default('.data/reservations.db'),
  /** How long an idempotency key is remembered before it is purged. */
  KEY_TTL: duration({ min: 1000 }).default(7 * DAY),
  SANDBOX_FAULTS: flag.default(false),
  LOG_LEVEL: logLevel.default('info'),
};

export interface ReservationsConfig {
  host: string;
  port: number;
  dbPath: string;
  keyTtlMs: number;
  faults: boolean;
  logLevel: z.infer<typeof logLevel>;
}

/** Throws ConfigError naming every bad variable. */
export function loadReservationsConfig(env: Record<string, string | undefined> = process.env): ReservationsConfig {
  const e = parseEnv(reservationsEnv, env);
  return {
    host: e.RESERVATIONS_HOST,
    port: e.RESERVATIONS_PORT,
    dbPath: e.RESERVATIONS_DB,
    keyTtlMs: e.KEY_TTL,
    faults: e.SANDBOX_FAULTS,
    logLevel: e.LOG_LEVEL,
  };
}
