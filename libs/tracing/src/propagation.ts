/**
 * W3C trace context across Ormuz's hops: NATS message headers (commands, and every message appended to the log, so
 * that a consumer continues the trace of the message it handles) and the `traceparent` field of device frames.
 * Everything goes through the global propagator, which only tracing's setup registers: without it these calls do
 * nothing and write nothing.
 */
import {
  context,
  propagation,
  ROOT_CONTEXT,
  trace,
  type Context,
  type TextMapGetter,
  type TextMapSetter,
} from '@opentelemetry/api';

/** The header and frame field holding the W3C trace context. */
export const TRACEPARENT = 'traceparent';

/** The part of NATS's `MsgHdrs` propagation uses (a missing header reads as `''`). */
export interface HeaderCarrier {
  get(key: string): string;
  set(key: string, value: string): void;
  keys(): string[];
}

const setter: TextMapSetter<HeaderCarrier> = { set: (carrier, key, value) => carrier.set(key, value) };
const getter: TextMapGetter<HeaderCarrier> = {
  get: (carrier, key) => carrier.get(key) || undefined,
  keys: (carrier) => carrier.keys(),
};

/** True when a sampled or unsampled span is active here: there is a trace to pass on. */
export function inTrace(ctx: Context = context.active()): boolean {
  const span = trace.getSpanContext(ctx);
  return span !== undefined && trace.isSpanContextValid(span);
}

/** Writes the active trace context (or `ctx`'s) into NATS headers; writes nothing when there is none. */
export function injectTraceHeaders(headers: HeaderCarrier, ctx: Context = context.active()): void {
  propagation.inject(ctx, headers, setter);
}

/**
 * True when this process propagates trace context (tracing's set-up registered a propagator). Until then a
 * message's headers are never read for it: NATS decodes a message's headers (the log's hold the aggregate's snapshot)
 * only when they are asked for, and a consumer that does not trace should not pay for that.
 */
function propagating(): boolean {
  return propagation.fields().length > 0;
}

/** The trace context a NATS message carries, on top of the root context (nothing ambient leaks in). */
export function traceContextOf(headers: HeaderCarrier | undefined): Context {
  return headers && propagating() ? propagation.extract(ROOT_CONTEXT, headers, getter) : ROOT_CONTEXT;
}

/**
 * The `traceparent` header of a NATS message (pass a getter: the headers are read only when this process traces),
 * when it has one.
 */
export function traceparentOf(
  headers: HeaderCarrier | undefined | (() => HeaderCarrier | undefined),
): string | undefined {
  if (!propagating()) return undefined;
  const carrier = typeof headers === 'function' ? headers() : headers;
  return carrier?.get(TRACEPARENT) || undefined;
}

/** The context a bare `traceparent` (a device frame's, one kept beside an event) names, on top of the root. */
export function contextOfTraceparent(traceparent: string | undefined): Context {
  return traceparent === undefined ? ROOT_CONTEXT : propagation.extract(ROOT_CONTEXT, { [TRACEPARENT]: traceparent });
}

/** The active span's context as a `traceparent` (for a device frame), or undefined outside a trace. */
export function activeTraceparent(ctx: Context = context.active()): string | undefined {
  if (!inTrace(ctx)) return undefined;
  const carrier: Record<string, string> = {};
  propagation.inject(ctx, carrier);
  return carrier[TRACEPARENT];
}

/**
 * Runs `work` in the trace `traceparent` names (a message's, a frame's), or as it is when there is none: a message
 * written without tracing costs its reader nothing.
 */
export function inTraceOf<T>(traceparent: string | undefined, work: () => T): T {
  return traceparent === undefined ? work() : context.with(contextOfTraceparent(traceparent), work);
}
