import { context, trace } from '@opentelemetry/api';
import { InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace';
import {
  activeTraceparent,
  contextOfTraceparent,
  injectTraceHeaders,
  inTraceOf,
  traceContextOf,
  traceparentOf,
  type HeaderCarrier,
} from './propagation.js';
import { inSpan, traceLogFields } from './spans.js';
import { registerTracing, type Tracing } from './setup.js';

/** NATS headers as propagation sees them: a missing one reads as ''. */
function headers(): HeaderCarrier & { readonly map: Map<string, string> } {
  const map = new Map<string, string>();
  return { map, get: (k) => map.get(k) ?? '', set: (k, v) => void map.set(k, v), keys: () => [...map.keys()] };
}

const TRACEPARENT = /^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/;

describe('without a tracer provider', () => {
  it('writes no header, reads none, and runs work as it is', async () => {
    const h = headers();
    await inSpan('test', 'nothing', {}, async () => {
      injectTraceHeaders(h);
      expect(activeTraceparent()).toBeUndefined();
      expect(traceLogFields()).toEqual({});
    });
    expect(h.map.size).toBe(0);
    h.set('traceparent', '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01');
    // Not even read: a process that does not trace never decodes a message's headers for it.
    expect(
      traceparentOf(() => {
        throw new Error('headers read');
      }),
    ).toBeUndefined();
    expect(traceparentOf(h)).toBeUndefined();
    expect(inTraceOf(undefined, () => 7)).toBe(7);
  });
});

describe('with a tracer provider', () => {
  const exporter = new InMemorySpanExporter();
  let tracing: Tracing;
  beforeAll(() => {
    tracing = registerTracing('test', [new SimpleSpanProcessor({ exporter })]);
  });
  afterAll(() => tracing.shutdown());

  it('carries a span across NATS headers: the receiver continues the sender trace', async () => {
    const h = headers();
    const sent = await inSpan('test', 'send', {}, async (span) => {
      injectTraceHeaders(h);
      return span.spanContext();
    });
    expect(traceparentOf(h)).toMatch(TRACEPARENT);
    const received = await inSpan('test', 'receive', { parent: traceContextOf(h) }, async (span) => span);
    expect(received.spanContext().traceId).toBe(sent.traceId);
    expect(exporter.getFinishedSpans().find((s) => s.name === 'receive')!.parentSpanContext?.spanId).toBe(sent.spanId);
  });

  it("carries a span in a frame's traceparent, and runs a consumer's work inside a message's trace", async () => {
    const traceparent = await inSpan('test', 'dispatch', {}, async () => activeTraceparent());
    expect(traceparent).toMatch(TRACEPARENT);
    const [, traceId, spanId] = traceparent!.split('-');
    expect(trace.getSpanContext(contextOfTraceparent(traceparent))).toMatchObject({ traceId, spanId });
    inTraceOf(traceparent, () => expect(trace.getSpanContext(context.active())?.spanId).toBe(spanId));
    expect(traceLogFields()).toEqual({});
    await inSpan('test', 'logged', { parent: contextOfTraceparent(traceparent) }, async () =>
      expect(traceLogFields()).toMatchObject({ trace_id: traceId, span_id: expect.stringMatching(/^[0-9a-f]{16}$/) }),
    );
  });

  it('ends a span whose work throws, marked failed', async () => {
    await expect(
      inSpan('test', 'fails', {}, async () => {
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    expect(exporter.getFinishedSpans().find((s) => s.name === 'fails')!.status).toMatchObject({
      code: 2,
      message: 'boom',
    });
  });
});
