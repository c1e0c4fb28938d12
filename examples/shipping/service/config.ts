// The shipping service's settings, read once from the environment: SHIPPING_HOST
// [127.0.0.1], SHIPPING_PORT [4003], SHIPPING_DB [.data/shipping.db], KEY_TTL [7d],
// SANDBOX_FAULTS [off; 1 enables PUT /_faults], LOG_LEVEL [info]. The same rules as the
// sandboxes'.
import { loadSandboxConfig, type SandboxConfig } from 'retrysafe-server/keyed-service';

const DEFAULTS = { port: 4003, db: '.data/shipping.db' };

/** Throws ConfigError naming every bad variable. */
export function loadShippingConfig(env: Record<string, string | undefined> = process.env): SandboxConfig {
  return loadSandboxConfig('SHIPPING', DEFAULTS, env);
}
