// What the launcher's unit tests hand its pure functions: a repository root that need not
// exist, the Temporal a stack reports to its parts and its banner (the embedded dev server,
// or a cluster of its own), and a stack of a given configuration.
import type { LauncherConfig } from '../../tools/launcher/options.js';
import type { StackSpec, StackTemporalInfo } from '../../tools/launcher/parts.js';

export const FAKE_ROOT = '/repo';

export const EMBEDDED: StackTemporalInfo = {
  address: '127.0.0.1:7233',
  namespace: 'default',
  uiUrl: 'http://localhost:8233',
  embedded: true,
};

export const CLUSTER: StackTemporalInfo = {
  ...EMBEDDED,
  embedded: false,
  cluster: { postgres: '127.0.0.1:7235', processes: ['postgres', 'temporal-frontend'], logDir: '/repo/.data/cluster/logs' },
};

/** A stack of this configuration: no faults, plain logs, the embedded dev server unless told otherwise. */
export function stackOf(config: LauncherConfig, more: Partial<Omit<StackSpec, 'config'>> = {}): StackSpec {
  return { config, faults: false, prettyLogs: false, temporal: EMBEDDED, ...more };
}
