// The one banner printed when the whole stack is ready: where everything is, and a curl
// that makes a payment right away.
import ms from 'ms';
import { displayFolder, displayOrigin, type OutsideOperations } from './definition-folders.js';
import type { LauncherConfig } from './options.js';
import type { Output } from './output.js';
import { apiUrls, type ServiceSettings, type StackPart, type StackTemporalInfo } from './parts.js';

export interface BannerInput {
  config: LauncherConfig;
  settings: ServiceSettings;
  temporal: StackTemporalInfo;
  /** The children, for their own rows and data files. */
  services: Pick<StackPart, 'banner' | 'dataFiles'>[];
  readyMs: number;
  /** Operations from outside (--operations), the services they call, and those that did not answer. */
  outside?: OutsideOperations & { silent: readonly string[] };
  /** With --traces: the Zipkin UI. */
  traces?: { ui: string };
}

export function renderBanner(input: BannerInput, out: Output): string {
  const { config, settings, temporal } = input;
  const apis = apiUrls(config);
  const api = apis[0]!;
  const dim = (s: string) => out.style('dim', s);
  const row = (label: string, value: string, note?: string) => `  ${label.padEnd(15)} ${value}${note ? `  ${dim(note)}` : ''}`;

  const files = [
    ...(temporal.embedded ? ['temporal.db'] : []),
    ...(temporal.cluster ? ['postgres/', 'logs/'] : []),
    ...input.services.flatMap((s) => s.dataFiles ?? []),
  ];
  const keys =
    settings.apiKeyCount > 0
      ? `${settings.apiKeyCount} configured (tenants: ${settings.tenants.join(', ')})`
      : 'none: dev mode, every request is tenant "default" (set RETRYSAFE_API_KEYS for real keys)';
  const curl = [
    `curl -s -X POST ${api}/v1/payments`,
    `-H 'Idempotency-Key: demo-1'`,
    ...(settings.apiKeyCount > 0 ? [`-H 'Authorization: Bearer <a secret from RETRYSAFE_API_KEYS>'`] : []),
    `-H 'Content-Type: application/json'`,
    `-d '{"account":"acc_alice","amount":1250,"currency":"EUR"}'`,
  ].join(' ');

  const lines = [
    '',
    out.style('bold', `retrysafe is ready in ${(input.readyMs / 1000).toFixed(1)} s`),
    '',
    ...apis.map((url, i) =>
      row(apis.length === 1 ? 'API' : `API ${i + 1}`, url, apis.length > 1 && i === 0 ? 'the curl below' : undefined),
    ),
    row('API docs', `${api}/docs`),
    row('OpenAPI', `${api}/openapi.json`),
    row('Temporal UI', temporal.uiUrl ?? '(unknown: set TEMPORAL_UI_URL)'),
    ...(input.traces
      ? [
          row('Traces', input.traces.ui, 'Zipkin: every part sends its spans here'),
          row('', `${input.traces.ui}traces/<traceId>`, "an operation's trace: its traceId is in GET /v1/operations/{key}"),
        ]
      : []),
    row(
      'Temporal gRPC',
      temporal.address,
      temporal.embedded
        ? `namespace ${temporal.namespace}, embedded dev server`
        : temporal.cluster
          ? `namespace ${temporal.namespace}, the cluster's frontend`
          : `namespace ${temporal.namespace}, external cluster from TEMPORAL_ADDRESS (no dev server started)`,
    ),
    ...(temporal.cluster
      ? [
          row('Cluster', temporal.cluster.processes.join(', ')),
          row('PostgreSQL', temporal.cluster.postgres, 'persistence and visibility'),
          row('Cluster logs', temporal.cluster.logDir, 'one file per process'),
        ]
      : []),
    ...input.services.flatMap((s) => s.banner.map((r) => row(r.label, r.value, r.note))),
    ...outsideRows(input, row),
    row('Data dir', config.dataDir, files.join(', ')),
    row('Retention', ms(config.retentionMs, { long: true }), "a finished operation's key is remembered this long"),
    row('API keys', keys),
    '',
    '  Make a payment (run it twice: the second answer is the same payment, Idempotent-Replayed: true):',
    `  ${curl}`,
    '',
    dim('  Ctrl-C stops everything (a second Ctrl-C forces).'),
    '',
  ];
  return lines.join('\n') + '\n';
}

/** The operations --operations added, and where the worker reaches the services they call. */
function outsideRows(input: BannerInput, row: (label: string, value: string, note?: string) => string): string[] {
  const outside = input.outside;
  if (!outside || outside.operations.length === 0) return [];
  const folders = input.config.operations.map((f) => displayFolder(f, input.config.root)).join(', ');
  return [
    row('Operations', outside.operations.map((o) => `${o.type} (POST /v1/${o.plural})`).join(', '), `from ${folders}`),
    ...outside.services.map((s) =>
      row(
        'Service',
        `${s.name} at ${displayOrigin(s.url)}`,
        outside.silent.includes(s.name) ? 'NOT ANSWERING: start it yourself' : 'started by you, called by the worker',
      ),
    ),
  ];
}
