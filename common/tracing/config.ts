// How a process traces, from the standard OpenTelemetry variables, read once at start-up.
// Tracing is on only when OTEL_TRACES_EXPORTER names an exporter (the SDK's own default
// would be `otlp`, so that a process nobody configured would try to export to
// localhost:4318); unset, empty or `none`, the process loads no SDK and makes no span. A bad
// value stops the process with a line naming the variable, as every other setting does.
//
//   OTEL_TRACES_EXPORTER           otlp | zipkin | console | none (a comma-separated list)
//   OTEL_EXPORTER_OTLP_ENDPOINT    base URL of an OTLP/HTTP receiver (the exporter adds /v1/traces)
//   OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, OTEL_EXPORTER_OTLP_PROTOCOL (http/protobuf only)
//   OTEL_EXPORTER_ZIPKIN_ENDPOINT  [http://localhost:9411/api/v2/spans]
//   OTEL_TRACES_SAMPLER            [parentbased_always_on], always_on, always_off,
//                                  traceidratio, parentbased_traceidratio, parentbased_always_off
//   OTEL_TRACES_SAMPLER_ARG        the ratio of the *ratio samplers, 0 to 1 [1]
//   OTEL_SERVICE_NAME              prefix of the service names [retrysafe]: <prefix>-api, ...
//   OTEL_RESOURCE_ATTRIBUTES       key=value,... added to every span's resource
//   OTEL_SDK_DISABLED              true turns tracing off whatever the exporter says
import { ConfigError } from '../env.js';

export const TRACE_EXPORTERS = ['otlp', 'zipkin', 'console'] as const;
export type TraceExporterName = (typeof TRACE_EXPORTERS)[number];

export const TRACE_SAMPLERS = [
  'always_on',
  'always_off',
  'traceidratio',
  'parentbased_always_on',
  'parentbased_always_off',
  'parentbased_traceidratio',
] as const;
export type TraceSamplerName = (typeof TRACE_SAMPLERS)[number];

/**
 * The variables of this module and the SDK's. A Temporal server reads them too, and refuses
 * to start with an exporter it lacks (zipkin): the launcher's servers never inherit them.
 */
export const OTEL_VARIABLES = /^OTEL_/;

export const DEFAULT_ZIPKIN_ENDPOINT = 'http://localhost:9411/api/v2/spans';
const OTLP_PROTOCOL = 'http/protobuf';

/** The processes that trace, each under its own service name (`retrysafe-api`, ...). */
export type TracedProcess = 'api' | 'worker' | (string & {});

export interface SamplerSettings {
  name: TraceSamplerName;
  /** The ratio of the ratio samplers; 1 for the others. */
  ratio: number;
}

export type TracingSettings =
  | { enabled: false }
  | {
      enabled: true;
      exporters: readonly TraceExporterName[];
      serviceName: string;
      /** Only with the zipkin exporter. */
      zipkinEndpoint: string;
      sampler: SamplerSettings;
      /** From OTEL_RESOURCE_ATTRIBUTES, percent-decoded. */
      resourceAttributes: Record<string, string>;
    };

type Env = Record<string, string | undefined>;

/** The variable's value, with empty counting as unset (as every other setting reads them). */
function read(env: Env, name: string): string | undefined {
  const value = env[name]?.trim();
  return value === undefined || value === '' ? undefined : value;
}

function isHttpUrl(value: string): boolean {
  try {
    return ['http:', 'https:'].includes(new URL(value).protocol);
  } catch {
    return false;
  }
}

/** The tracing settings of `process`; throws ConfigError naming every bad variable. */
export function loadTracingSettings(process: TracedProcess, env: Env): TracingSettings {
  const problems: string[] = [];
  const bad = (name: string, message: string) => problems.push(`${name}=${JSON.stringify(env[name])}: ${message}`);

  const disabled = read(env, 'OTEL_SDK_DISABLED');
  if (disabled !== undefined && !['true', 'false'].includes(disabled.toLowerCase()))
    bad('OTEL_SDK_DISABLED', 'must be true or false');

  const exporterList = read(env, 'OTEL_TRACES_EXPORTER');
  const names = (exporterList ?? 'none').split(',').map((n) => n.trim().toLowerCase());
  const exporters: TraceExporterName[] = [];
  for (const name of names) {
    if ((TRACE_EXPORTERS as readonly string[]).includes(name)) {
      if (!exporters.includes(name as TraceExporterName)) exporters.push(name as TraceExporterName);
    } else if (name !== 'none') {
      bad('OTEL_TRACES_EXPORTER', `"${name}" is not an exporter retrysafe has: use otlp, zipkin, console or none`);
    }
  }
  if (names.includes('none') && exporters.length > 0) bad('OTEL_TRACES_EXPORTER', 'none cannot be combined with an exporter');

  const zipkinEndpoint = read(env, 'OTEL_EXPORTER_ZIPKIN_ENDPOINT') ?? DEFAULT_ZIPKIN_ENDPOINT;
  if (!isHttpUrl(zipkinEndpoint))
    bad('OTEL_EXPORTER_ZIPKIN_ENDPOINT', 'must be an http(s) URL such as ' + DEFAULT_ZIPKIN_ENDPOINT);
  for (const name of ['OTEL_EXPORTER_OTLP_ENDPOINT', 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT']) {
    const url = read(env, name);
    if (url !== undefined && !isHttpUrl(url)) bad(name, 'must be an http(s) URL such as http://localhost:4318');
  }
  for (const name of ['OTEL_EXPORTER_OTLP_PROTOCOL', 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL']) {
    const protocol = read(env, name);
    if (protocol !== undefined && protocol !== OTLP_PROTOCOL) {
      bad(name, `retrysafe exports OTLP over ${OTLP_PROTOCOL} only (set it to ${OTLP_PROTOCOL}, or leave it unset)`);
    }
  }

  const samplerName = (read(env, 'OTEL_TRACES_SAMPLER') ?? 'parentbased_always_on').toLowerCase();
  const knownSampler = (TRACE_SAMPLERS as readonly string[]).includes(samplerName);
  if (!knownSampler) bad('OTEL_TRACES_SAMPLER', `must be one of ${TRACE_SAMPLERS.join(', ')}`);
  let ratio = 1;
  const arg = read(env, 'OTEL_TRACES_SAMPLER_ARG');
  if (arg !== undefined && samplerName.endsWith('traceidratio')) {
    ratio = /^(?:\d+(?:\.\d*)?|\.\d+)$/.test(arg) ? Number(arg) : Number.NaN;
    if (!(ratio >= 0 && ratio <= 1)) bad('OTEL_TRACES_SAMPLER_ARG', 'must be a ratio between 0 and 1, such as 0.25');
  }

  const prefix = read(env, 'OTEL_SERVICE_NAME') ?? 'retrysafe';
  if (/[\s,=]/.test(prefix)) bad('OTEL_SERVICE_NAME', 'must be one word without spaces, commas or =, such as shop');

  const resourceAttributes = parseResourceAttributes(read(env, 'OTEL_RESOURCE_ATTRIBUTES'), (message) =>
    bad('OTEL_RESOURCE_ATTRIBUTES', message),
  );

  if (problems.length > 0) throw new ConfigError(problems);
  if (exporters.length === 0 || disabled?.toLowerCase() === 'true') return { enabled: false };
  return {
    enabled: true,
    exporters,
    serviceName: `${prefix}-${process}`,
    zipkinEndpoint,
    sampler: { name: samplerName as TraceSamplerName, ratio },
    resourceAttributes,
  };
}

/**
 * `key1=value1,key2=value2` with percent-encoded values, as the specification writes the
 * variable. The service name is the process's own (OTEL_SERVICE_NAME is its prefix), so a
 * `service.name` here is refused rather than silently ignored.
 */
function parseResourceAttributes(raw: string | undefined, bad: (message: string) => void): Record<string, string> {
  const attributes: Record<string, string> = {};
  if (raw === undefined) return attributes;
  for (const pair of raw.split(',')) {
    if (pair.trim() === '') continue;
    const eq = pair.indexOf('=');
    const key = eq < 0 ? '' : pair.slice(0, eq).trim();
    if (key === '' || /\s/.test(key)) {
      bad(`"${pair}" is not key=value (example: deployment.environment.name=staging,team=payments)`);
      continue;
    }
    if (key === 'service.name') {
      bad('service.name is set per process (retrysafe-api, retrysafe-worker, ...): use OTEL_SERVICE_NAME for its prefix');
      continue;
    }
    try {
      attributes[key] = decodeURIComponent(pair.slice(eq + 1).trim());
    } catch {
      bad(`the value of ${key} is not valid percent-encoding`);
    }
  }
  return attributes;
}
