/** Spans as Ormuz starts them: active for the work they cover, ended and marked failed whatever happens. */
import {
  context,
  SpanStatusCode,
  trace,
  type Context,
  type Link,
  type Span,
  type SpanOptions,
} from '@opentelemetry/api';

export interface OrmuzSpanOptions extends SpanOptions {
  /** The parent (a message's or a frame's context); default the active one. */
  readonly parent?: Context;
}

/**
 * Runs `work` inside a new span of `scope`'s tracer (`@ormuz/policy`, …) named `name`, ends it when `work` settles,
 * and records a thrown error on it before rethrowing. Without a registered tracer provider the span is the API's
 * non-recording one and nothing is kept.
 */
export function inSpan<T>(
  scope: string,
  name: string,
  options: OrmuzSpanOptions,
  work: (span: Span) => Promise<T>,
): Promise<T> {
  const { parent, ...spanOptions } = options;
  return trace
    .getTracer(scope)
    .startActiveSpan(name, spanOptions, parent ?? context.active(), async (span): Promise<T> => {
      try {
        return await work(span);
      } catch (err) {
        failed(span, err);
        throw err;
      } finally {
        span.end();
      }
    });
}

/** Marks `span` failed with `err`. */
export function failed(span: Span, err: unknown): void {
  span.recordException(err instanceof Error ? err : String(err));
  span.setStatus({ code: SpanStatusCode.ERROR, message: err instanceof Error ? err.message : String(err) });
}

/** A link to the span active in `ctx`, when there is one (the request that led to work done in another trace). */
export function linksTo(ctx: Context = context.active()): Link[] {
  const span = trace.getSpanContext(ctx);
  return span && trace.isSpanContextValid(span) ? [{ context: span }] : [];
}

/** The ids a log line carries while a span is active (pino's `mixin`): `trace_id`, `span_id`, `trace_flags`. */
export function traceLogFields(): Record<string, string> {
  const span = trace.getSpanContext(context.active());
  if (!span || !trace.isSpanContextValid(span)) return {};
  return { trace_id: span.traceId, span_id: span.spanId, trace_flags: `0${span.traceFlags.toString(16)}` };
}
