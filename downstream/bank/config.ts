// The bank's settings, read once from the environment: BANK_HOST, BANK_PORT, BANK_DB,
// KEY_TTL, SANDBOX_FAULTS, LOG_LEVEL (see downstream/shared/service.ts).
import { loadSandboxConfig, type SandboxConfig } from '../shared/service.js';

const DEFAULTS = { port: 4001, db: '.data/bank.db' };

export type BankConfig = SandboxConfig;

/** Throws ConfigError naming every bad variable. */
export function loadBankConfig(env: Record<string, string | undefined> = process.env): BankConfig {
  return loadSandboxConfig('BANK', DEFAULTS, env);
}
