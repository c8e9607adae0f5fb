import { readSse, type SseEvent } from './sse.js';

/** A body delivered in exactly these chunks. */
function body(...chunks: (string | Uint8Array)[]): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  return new ReadableStream({
    start(controller) {
      for (const c of chunks) controller.enqueue(typeof c === 'string' ? encoder.encode(c) : c);
      controller.close();
    },
  });
}

async function events(stream: ReadableStream<Uint8Array>): Promise<SseEvent[]> {
  const out: SseEvent[] = [];
  for await (const e of readSse(stream)) out.push(e);
  return out;
}

describe('readSse', () => {
  it('reads named and unnamed events, joins data lines, skips comments', async () => {
    expect(await events(body(': keep-alive\n\nevent: ping\ndata: {}\n\ndata: a\ndata: b\n\n'))).toEqual([
      { event: 'ping', data: '{}' },
      { data: 'a\nb' },
    ]);
  });

  it('keeps lines split across chunks, CRLF split between chunks, and a character split mid-bytes', async () => {
    const euro = new TextEncoder().encode('data: €\n\n');
    expect(
      await events(body('da', 'ta: {"x"', ':1}\r', '\n\r\n', euro.slice(0, 7), euro.slice(7), 'data: [DONE]\n\n')),
    ).toEqual([{ data: '{"x":1}' }, { data: '€' }, { data: '[DONE]' }]);
  });

  it('yields a last event that lacks its blank line', async () => {
    expect(await events(body('data: tail'))).toEqual([{ data: 'tail' }]);
  });
});
