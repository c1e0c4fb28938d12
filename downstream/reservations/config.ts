// The reservation service's settings, read once from the environment: RESERVATIONS_HOST,
// RESERVATIONS_PORT, RESERVATIONS_DB, KEY_TTL, SANDBOX_FAULTS, LOG_LEVEL.
import { loadSandboxConfig, type SandboxConfig } from '../shared/service.js';

const DEFAULTS = { port: 4002, db: '.data/reservations.db' };

export type ReservationsConfig = SandboxConfig;

/** Throws ConfigError naming every bad variable. */
export function loadReservationsConfig(env: Record<string, string | undefined> = process.env): ReservationsConfig {
  return loadSandboxConfig('RESERVATIONS', DEFAULTS, env);
}
