import { tracingPlan, TracingConfigError } from './setup.js';

describe('tracingPlan: what the OTEL_* variables ask for', () => {
  it('asks for nothing without an exporter or an endpoint, or when the SDK is disabled', () => {
    expect(tracingPlan('policy', {})).toBeNull();
    expect(
      tracingPlan('policy', { OTEL_TRACES_EXPORTER: 'none', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318' }),
    ).toBeNull();
    expect(
      tracingPlan('policy', { OTEL_SDK_DISABLED: 'true', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318' }),
    ).toBeNull();
  });

  it('exports OTLP over http/protobuf when only an endpoint is given, named after the service', () => {
    expect(tracingPlan('policy', { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318' })).toEqual({
      serviceName: 'policy',
      exporters: ['otlp-protobuf'],
      sampler: { name: 'parentbased_always_on', ratio: 1 },
    });
    expect(tracingPlan('policy', { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://c:4318/v1/traces' })?.exporters).toEqual(
      ['otlp-protobuf'],
    );
  });

  it('follows the protocol, the exporters named, the service name and the sampler', () => {
    expect(
      tracingPlan('policy', {
        OTEL_TRACES_EXPORTER: 'otlp, console',
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
        OTEL_SERVICE_NAME: 'policy-eu',
        OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
        OTEL_TRACES_SAMPLER_ARG: '0.25',
      }),
    ).toEqual({
      serviceName: 'policy-eu',
      exporters: ['otlp-json', 'console'],
      sampler: { name: 'parentbased_traceidratio', ratio: 0.25 },
    });
  });

  it('refuses what it cannot do, naming the variable', () => {
    expect(() => tracingPlan('policy', { OTEL_TRACES_EXPORTER: 'zipkin' })).toThrow(TracingConfigError);
    expect(() => tracingPlan('policy', { OTEL_TRACES_EXPORTER: 'otlp', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' })).toThrow(
      /OTEL_EXPORTER_OTLP_PROTOCOL=grpc/,
    );
  });
});
