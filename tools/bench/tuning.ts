// The embedded dev server's tuning as the bench sees it: the list tools/dev-server.ts
// applies everywhere (the launcher, the tests, the chaos run), one entry per setting the
// ablation can switch off, and the server started without some of them.
import {
  DEV_SERVER_TUNING,
  startDevServer,
  type DevServer,
  type DevServerOptions,
  type DevServerSetting,
} from '../dev-server.js';
import type { Supervisor } from '../supervisor/supervisor.js';

export type TuningSetting = DevServerSetting;

export interface Tuning {
  settings: readonly TuningSetting[];
  /** Where the list came from, for the report. */
  source: string;
}

export function devServerTuning(): Tuning {
  return { settings: DEV_SERVER_TUNING, source: 'tools/dev-server.ts DEV_SERVER_TUNING' };
}

/** Starts the dev server with every setting but those named in `without` (an unknown name is an error). */
export function startDevServerWithout(
  opts: DevServerOptions & { retentionMs: number; supervisor: Supervisor },
  without: readonly string[],
): Promise<DevServer> {
  return startDevServer({ ...opts, without });
}
