// `--traces`: the Zipkin server as a supervised part of the stack, started beside Temporal
// and waited for before the banner (the stack is ready only once it answers), restarted
// after a crash like every part, stopped last so the others' last spans still reach it.
// Its own output is a banner and routine lines: only its errors are shown.
import { StartError } from '../supervisor/ready.js';
import { RESTART_WITH_BACKOFF, type Supervisor } from '../supervisor/supervisor.js';
import { ensureZipkin, ZipkinUnavailableError, zipkinCommand, zipkinUrls } from '../zipkin.js';
import type { LauncherConfig } from './options.js';
import type { Output } from './output.js';

/** The Zipkin server's first start takes some 10 s of a busy JVM on a small machine. */
const ZIPKIN_START_TIMEOUT_MS = 120_000;

/** The jar, fetched the first time (before anything starts); StartError when it cannot be had. */
export function zipkinJar(config: LauncherConfig, output: Output): string {
  try {
    return ensureZipkin({ root: config.root, log: (line) => output.info(line) });
  } catch (err) {
    if (err instanceof ZipkinUnavailableError) throw new StartError('zipkin', err.message);
    throw err;
  }
}

/** Adds the Zipkin server to `supervisor` and resolves once it answers. */
export async function startZipkin(
  config: LauncherConfig,
  jar: string,
  supervisor: Supervisor,
  output: Output,
  signal: AbortSignal,
): Promise<void> {
  const port = config.traces!.zipkinPort;
  await supervisor
    .add({
      name: 'zipkin',
      command: zipkinCommand(jar, port),
      ready: (ctx) => ctx.http(zipkinUrls(port).health),
      readyTimeoutMs: Math.max(config.startTimeoutMs, ZIPKIN_START_TIMEOUT_MS),
      stopGraceMs: config.stopGraceMs,
      restart: RESTART_WITH_BACKOFF,
      onLine: (line, stream) => {
        if (/\sERROR\s/.test(line)) output.child('zipkin', line, stream);
      },
    })
    .start(signal);
}
