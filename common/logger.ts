// Structured JSON logs (pino) for every process; pretty when a person is watching
// (`LOG_PRETTY=1`, set by `npm start` for a terminal). Secrets are redacted by path.
// Lines written inside a traced request, step or delivery carry its trace_id and span_id.
import pino, { type Logger } from 'pino';
import { traceLogFields } from './tracing/log-fields.js';

export type { Logger };

/**
 * Every secret a process holds, wherever a log line might carry it: the Authorization
 * header of a request or an answer, the API keys, the metrics token and the webhook
 * signing secrets (as variables and as parsed config), Temporal's API key and the private
 * key of its TLS client certificate (as variables and as connection options).
 *
 * Each path is spelled out: a wildcard before the last segment makes the redactor walk
 * every object a line holds, and reading some of them throws (a DOMException's getters,
 * such as the timeout error of an aborted fetch), which would take the process down.
 */
export const REDACT_PATHS = [
  'authorization',
  'headers.authorization',
  'headers.Authorization',
  'req.headers.authorization',
  'res.headers.authorization',
  'RETRYSAFE_API_KEYS',
  'RETRYSAFE_METRICS_TOKEN',
  'RETRYSAFE_WEBHOOK_SECRETS',
  'RETRYSAFE_WEBHOOK_SECRET',
  'TEMPORAL_API_KEY',
  'TEMPORAL_TLS_CLIENT_KEY_DATA',
  'env.RETRYSAFE_API_KEYS',
  'env.RETRYSAFE_METRICS_TOKEN',
  'env.RETRYSAFE_WEBHOOK_SECRETS',
  'env.TEMPORAL_API_KEY',
  'env.TEMPORAL_TLS_CLIENT_KEY_DATA',
  'apiKey',
  'apiKeys',
  'config.apiKeys',
  'metricsToken',
  'config.metricsToken',
  'secret',
  'secrets',
  'webhooks.secrets',
  'config.webhooks.secrets',
  'connectionOptions.apiKey',
  'nativeConnectionOptions.apiKey',
  'tls.clientCertPair.key',
  'connectionOptions.tls.clientCertPair.key',
  'nativeConnectionOptions.tls.clientCertPair.key',
];

export function createLogger(
  name: string,
  opts: {
    level?: string;
    pretty?: boolean;
    /** Where the JSON lines go instead of stdout (tests). */
    destination?: pino.DestinationStream;
  } = {},
): Logger {
  const pretty = opts.pretty ?? ['1', 'true'].includes((process.env.LOG_PRETTY ?? '').toLowerCase());
  const options: pino.LoggerOptions = {
    name,
    level: opts.level ?? process.env.LOG_LEVEL ?? 'info',
    redact: { paths: REDACT_PATHS, censor: '[redacted]' },
    // trace_id and span_id on every line written inside a traced request, step or delivery.
    mixin: (_fields, _level, logger) => traceLogFields(logger),
    ...(pretty
      ? { transport: { target: 'pino-pretty', options: { colorize: true, translateTime: 'HH:MM:ss.l', ignore: 'pid,hostname' } } }
      : {}),
  };
  return opts.destination ? pino(options, opts.destination) : pino(options);
}

/**
 * Writes out what a logger still holds (its stream writes asynchronously), for a process
 * about to kill itself on purpose: a SIGKILL would otherwise lose the line that says why.
 */
export function flushLogsSync(log: Pick<Logger, 'warn'>): void {
  const stream = (log as unknown as Record<symbol, { flushSync?: () => void } | undefined>)[pino.symbols.streamSym];
  try {
    stream?.flushSync?.();
  } catch {
    // Not open yet: then nothing was written to it either.
  }
}
