/**
 * A process's tracer provider, set up from the standard `OTEL_*` variables, or not at all: a service whose
 * environment asks for no traces registers nothing, and every span the code starts is then the API's non-recording
 * one (no ids drawn, nothing kept, no header written).
 *
 * Traces are wanted when `OTEL_TRACES_EXPORTER` names an exporter (`otlp`, `console`), or, when it is unset, when an
 * OTLP endpoint is given (`OTEL_EXPORTER_OTLP_ENDPOINT` or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`);
 * `OTEL_SDK_DISABLED=true` turns everything off. The OTLP exporter speaks `http/protobuf` (the specification's
 * default) or `http/json` (`OTEL_EXPORTER_OTLP_[TRACES_]PROTOCOL`) and reads its own endpoint, headers and timeout
 * from the environment. `OTEL_SERVICE_NAME` (default: the service's name) and `OTEL_RESOURCE_ATTRIBUTES` describe the
 * process; `OTEL_TRACES_SAMPLER`/`_ARG` and `OTEL_BSP_*` are honoured.
 */
import { context, propagation, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { CompositePropagator, W3CBaggagePropagator, W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter as OtlpJsonExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as OtlpProtobufExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { defaultResource, envDetector, detectResources, resourceFromAttributes } from '@opentelemetry/resources';
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BatchSpanProcessor,
  ConsoleSpanExporter,
  ParentBasedSampler,
  TraceIdRatioBasedSampler,
  TracerProvider,
  type Sampler,
  type SpanExporter,
  type SpanProcessor,
} from '@opentelemetry/sdk-trace';
import { ATTR_SERVICE_NAME } from '@opentelemetry/semantic-conventions';

type Env = Readonly<Record<string, string | undefined>>;

/** What the environment asks for: the exporters, or null for no tracing at all. */
export interface TracingPlan {
  readonly serviceName: string;
  readonly exporters: readonly ('otlp-protobuf' | 'otlp-json' | 'console')[];
  readonly sampler: { readonly name: string; readonly ratio: number };
}

/** A configuration the variables cannot mean; the service refuses to start with it rather than trace nothing. */
export class TracingConfigError extends Error {}

/** Reads the `OTEL_*` variables (pure). Throws {@link TracingConfigError} for a value it does not support. */
export function tracingPlan(service: string, env: Env): TracingPlan | null {
  if (env['OTEL_SDK_DISABLED']?.trim().toLowerCase() === 'true') return null;
  const named = env['OTEL_TRACES_EXPORTER']?.trim();
  const endpoint = env['OTEL_EXPORTER_OTLP_TRACES_ENDPOINT'] || env['OTEL_EXPORTER_OTLP_ENDPOINT'];
  const names = named ? named.split(',').map((n) => n.trim().toLowerCase()) : endpoint ? ['otlp'] : [];
  const exporters: TracingPlan['exporters'][number][] = [];
  for (const name of new Set(names)) {
    if (name === 'none' || name === '') continue;
    if (name === 'console') exporters.push('console');
    else if (name === 'otlp') {
      const protocol = (
        env['OTEL_EXPORTER_OTLP_TRACES_PROTOCOL'] ||
        env['OTEL_EXPORTER_OTLP_PROTOCOL'] ||
        'http/protobuf'
      ).trim();
      if (protocol === 'http/protobuf') exporters.push('otlp-protobuf');
      else if (protocol === 'http/json') exporters.push('otlp-json');
      else {
        throw new TracingConfigError(
          `OTEL_EXPORTER_OTLP_PROTOCOL=${protocol} is not supported: use http/protobuf or http/json.`,
        );
      }
    } else {
      throw new TracingConfigError(`OTEL_TRACES_EXPORTER=${name} is not supported: use otlp, console or none.`);
    }
  }
  if (exporters.length === 0) return null;
  const ratio = Number(env['OTEL_TRACES_SAMPLER_ARG'] ?? '1');
  return {
    serviceName: env['OTEL_SERVICE_NAME']?.trim() || service,
    exporters,
    sampler: {
      name: env['OTEL_TRACES_SAMPLER']?.trim() || 'parentbased_always_on',
      ratio: Number.isFinite(ratio) && ratio >= 0 && ratio <= 1 ? ratio : 1,
    },
  };
}

function samplerOf({ name, ratio }: TracingPlan['sampler']): Sampler {
  switch (name) {
    case 'always_on':
      return new AlwaysOnSampler();
    case 'always_off':
      return new AlwaysOffSampler();
    case 'traceidratio':
      return new TraceIdRatioBasedSampler(ratio);
    case 'parentbased_always_on':
      return new ParentBasedSampler({ root: new AlwaysOnSampler() });
    case 'parentbased_always_off':
      return new ParentBasedSampler({ root: new AlwaysOffSampler() });
    case 'parentbased_traceidratio':
      return new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(ratio) });
    default:
      throw new TracingConfigError(
        `OTEL_TRACES_SAMPLER=${name} is not supported: use always_on, always_off, traceidratio or their parentbased_ forms.`,
      );
  }
}

function exporterOf(kind: TracingPlan['exporters'][number]): SpanExporter {
  switch (kind) {
    case 'otlp-protobuf':
      return new OtlpProtobufExporter();
    case 'otlp-json':
      return new OtlpJsonExporter();
    case 'console':
      return new ConsoleSpanExporter();
  }
}

function batchOptions(env: Env) {
  const n = (name: string) => {
    const value = Number(env[name]);
    return env[name] && Number.isInteger(value) && value > 0 ? value : undefined;
  };
  const options = {
    scheduledDelayMillis: n('OTEL_BSP_SCHEDULE_DELAY'),
    exportTimeoutMillis: n('OTEL_BSP_EXPORT_TIMEOUT'),
    maxQueueSize: n('OTEL_BSP_MAX_QUEUE_SIZE'),
    maxExportBatchSize: n('OTEL_BSP_MAX_EXPORT_BATCH_SIZE'),
  };
  return Object.fromEntries(Object.entries(options).filter(([, v]) => v !== undefined));
}

/** A registered tracer provider: flush and stop it before the process exits. */
export interface Tracing {
  /** Exports what is buffered and unregisters the provider. */
  shutdown(): Promise<void>;
}

/**
 * Registers, for the whole process, a tracer provider with `processors`, the W3C trace-context (and baggage)
 * propagator and the AsyncLocalStorage context manager. Tests register an in-memory exporter through it.
 */
export function registerTracing(serviceName: string, processors: SpanProcessor[], sampler?: Sampler): Tracing {
  const resource = defaultResource()
    .merge(resourceFromAttributes({ [ATTR_SERVICE_NAME]: serviceName }))
    .merge(detectResources({ detectors: [envDetector] }));
  const provider = new TracerProvider({ resource, spanProcessors: processors, ...(sampler ? { sampler } : {}) });
  const contextManager = new AsyncLocalStorageContextManager().enable();
  context.setGlobalContextManager(contextManager);
  propagation.setGlobalPropagator(
    new CompositePropagator({ propagators: [new W3CTraceContextPropagator(), new W3CBaggagePropagator()] }),
  );
  trace.setGlobalTracerProvider(provider);
  return {
    async shutdown() {
      await provider.shutdown();
      trace.disable();
      propagation.disable();
      context.disable();
    },
  };
}

/**
 * Starts tracing for the process of `service` when its environment asks for it (see the file's comment); returns
 * undefined, having registered nothing, when it does not. Throws {@link TracingConfigError}. The process's own
 * environment, since the OTLP exporters read theirs (endpoint, headers, timeout) from it too.
 */
export function startTracing(service: string): Tracing | undefined {
  const env = process.env;
  const plan = tracingPlan(service, env);
  if (!plan) return undefined;
  const sampler = samplerOf(plan.sampler);
  const options = batchOptions(env);
  const processors = plan.exporters.map((kind) => new BatchSpanProcessor({ exporter: exporterOf(kind), ...options }));
  return registerTracing(plan.serviceName, processors, sampler);
}
