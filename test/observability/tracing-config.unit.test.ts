// The tracing settings every process reads from the standard OpenTelemetry variables: off
// unless an exporter is named, the service name per process with OTEL_SERVICE_NAME as its
// prefix, and every bad value refused with a line naming its variable.
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../common/env.js';
import { loadTracingSettings } from '../../common/tracing/config.js';

function problems(env: Record<string, string>): string[] {
  try {
    loadTracingSettings('api', env);
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  throw new Error(`accepted ${JSON.stringify(env)}`);
}

describe('tracing settings', () => {
  it.each([{}, { OTEL_TRACES_EXPORTER: '' }, { OTEL_TRACES_EXPORTER: 'none' }, { OTEL_TRACES_EXPORTER: ' NONE ' }])(
    'are off unless an exporter is named (%j), unlike the SDK whose default is otlp',
    (env) => {
      expect(loadTracingSettings('worker', env)).toEqual({ enabled: false });
    },
  );

  it('are off with OTEL_SDK_DISABLED=true whatever the exporter', () => {
    expect(loadTracingSettings('api', { OTEL_TRACES_EXPORTER: 'zipkin', OTEL_SDK_DISABLED: 'true' })).toEqual({
      enabled: false,
    });
  });

  it('name each process retrysafe-<process>, or <OTEL_SERVICE_NAME>-<process>', () => {
    const on = { OTEL_TRACES_EXPORTER: 'zipkin' };
    for (const process of ['api', 'worker', 'bank', 'reservations', 'shipping']) {
      expect(loadTracingSettings(process, on)).toMatchObject({ enabled: true, serviceName: `retrysafe-${process}` });
      expect(loadTracingSettings(process, { ...on, OTEL_SERVICE_NAME: 'shop' })).toMatchObject({
        serviceName: `shop-${process}`,
      });
    }
  });

  it('read the exporters, the Zipkin endpoint, the sampler and the resource attributes', () => {
    expect(
      loadTracingSettings('worker', {
        OTEL_TRACES_EXPORTER: 'otlp, zipkin,otlp',
        OTEL_EXPORTER_ZIPKIN_ENDPOINT: 'http://127.0.0.1:9411/api/v2/spans',
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318',
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf',
        OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
        OTEL_TRACES_SAMPLER_ARG: '0.25',
        OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment.name=staging, team=pay%20ments',
      }),
    ).toEqual({
      enabled: true,
      exporters: ['otlp', 'zipkin'],
      serviceName: 'retrysafe-worker',
      zipkinEndpoint: 'http://127.0.0.1:9411/api/v2/spans',
      sampler: { name: 'parentbased_traceidratio', ratio: 0.25 },
      resourceAttributes: { 'deployment.environment.name': 'staging', team: 'pay ments' },
    });
  });

  it('default to the parent-based always-on sampler and the local Zipkin endpoint', () => {
    expect(loadTracingSettings('api', { OTEL_TRACES_EXPORTER: 'console' })).toMatchObject({
      sampler: { name: 'parentbased_always_on', ratio: 1 },
      zipkinEndpoint: 'http://localhost:9411/api/v2/spans',
      resourceAttributes: {},
    });
  });

  it.each([
    [{ OTEL_TRACES_EXPORTER: 'jaeger' }, 'OTEL_TRACES_EXPORTER="jaeger": "jaeger" is not an exporter retrysafe has'],
    [{ OTEL_TRACES_EXPORTER: 'zipkin,none' }, 'OTEL_TRACES_EXPORTER="zipkin,none": none cannot be combined'],
    [
      { OTEL_EXPORTER_ZIPKIN_ENDPOINT: 'localhost:9411' },
      'OTEL_EXPORTER_ZIPKIN_ENDPOINT="localhost:9411": must be an http(s) URL',
    ],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'grpc://collector:4317' }, 'OTEL_EXPORTER_OTLP_ENDPOINT="grpc://collector:4317": must be'],
    [{ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'nope' }, 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT="nope": must be an http(s) URL'],
    [
      { OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' },
      'OTEL_EXPORTER_OTLP_PROTOCOL="grpc": retrysafe exports OTLP over http/protobuf only',
    ],
    [{ OTEL_TRACES_SAMPLER: 'sometimes' }, 'OTEL_TRACES_SAMPLER="sometimes": must be one of always_on, always_off'],
    [
      { OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '1.5' },
      'OTEL_TRACES_SAMPLER_ARG="1.5": must be a ratio between 0 and 1',
    ],
    [
      { OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: 'half' },
      'OTEL_TRACES_SAMPLER_ARG="half": must be a ratio',
    ],
    [{ OTEL_SERVICE_NAME: 'my shop' }, 'OTEL_SERVICE_NAME="my shop": must be one word'],
    [{ OTEL_RESOURCE_ATTRIBUTES: 'team' }, 'OTEL_RESOURCE_ATTRIBUTES="team": "team" is not key=value'],
    [
      { OTEL_RESOURCE_ATTRIBUTES: 'team=%zz' },
      'OTEL_RESOURCE_ATTRIBUTES="team=%zz": the value of team is not valid percent-encoding',
    ],
    [
      { OTEL_RESOURCE_ATTRIBUTES: 'service.name=x' },
      'OTEL_RESOURCE_ATTRIBUTES="service.name=x": service.name is set per process',
    ],
    [{ OTEL_SDK_DISABLED: 'maybe' }, 'OTEL_SDK_DISABLED="maybe": must be true or false'],
  ])('refuse %j with a line naming the variable', (env, message) => {
    // Refused whether tracing is on or not: a typo must not wait for the day it is turned on.
    for (const exporter of ['zipkin', 'none']) {
      const found = problems({ OTEL_TRACES_EXPORTER: exporter, ...env });
      expect(found).toHaveLength(1);
      expect(found[0]).toContain(message);
    }
  });

  it('name every bad variable at once', () => {
    expect(problems({ OTEL_TRACES_EXPORTER: 'jaeger', OTEL_TRACES_SAMPLER: 'x', OTEL_SERVICE_NAME: 'a b' })).toEqual([
      expect.stringMatching(/^OTEL_TRACES_EXPORTER=/),
      expect.stringMatching(/^OTEL_TRACES_SAMPLER=/),
      expect.stringMatching(/^OTEL_SERVICE_NAME=/),
    ]);
  });
});
