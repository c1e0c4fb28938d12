// The one banner printed when the whole stack is ready: where everything is, and a curl
// that makes a payment right away.
import ms from 'ms';
import type { LauncherConfig } from './options.js';
import type { Output } from './output.js';
import { apiUrl, type ServiceSettings, type StackPart } from './parts.js';

export interface BannerInput {
  config: LauncherConfig;
  settings: ServiceSettings;
  temporal: { address: string; namespace: string; uiUrl: string | undefined; embedded: boolean };
  /** The children, for their own rows and data files. */
  services: Pick<StackPart, 'banner' | 'dataFiles'>[];
  readyMs: number;
}

export function renderBanner(input: BannerInput, out: Output): string {
  const { config, settings, temporal } = input;
  const api = apiUrl(config);
  const dim = (s: string) => out.style('dim', s);
  const row = (label: string, value: string, note?: string) => `  ${label.padEnd(15)} ${value}${note ? `  ${dim(note)}` : ''}`;

  const files = [...(temporal.embedded ? ['temporal.db'] : []), ...input.services.flatMap((s) => s.dataFiles ?? [])];
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
    row('API', api),
    row('API docs', `${api}/docs`),
    row('OpenAPI', `${api}/openapi.json`),
    row('Temporal UI', temporal.uiUrl ?? '(unknown: set TEMPORAL_UI_URL)'),
    row(
      'Temporal gRPC',
      temporal.address,
      temporal.embedded
        ? `namespace ${temporal.namespace}, embedded dev server`
        : `namespace ${temporal.namespace}, external cluster from TEMPORAL_ADDRESS (no dev server started)`,
    ),
    ...input.services.flatMap((s) => s.banner.map((r) => row(r.label, r.value, r.note))),
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
