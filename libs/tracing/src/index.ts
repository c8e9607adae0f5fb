export { SpanKind, type Span } from '@opentelemetry/api';
export * from './attributes.js';
export {
  TRACEPARENT,
  activeTraceparent,
  contextOfTraceparent,
  injectTraceHeaders,
  inTrace,
  inTraceOf,
  traceContextOf,
  traceparentOf,
  type HeaderCarrier,
} from './propagation.js';
export { failed, inSpan, linksTo, traceLogFields, type OrmuzSpanOptions } from './spans.js';
export {
  registerTracing,
  startTracing,
  tracingPlan,
  TracingConfigError,
  type Tracing,
  type TracingPlan,
} from './setup.js';
