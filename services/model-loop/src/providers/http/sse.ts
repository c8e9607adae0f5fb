/**
 * Server-sent events as providers stream them (WHATWG HTML §9.2): lines of `field: value`, an event per blank line,
 * `data` lines joined with newlines, comments (`:`) ignored. Chunk boundaries fall anywhere, even inside a UTF-8
 * character or between `\r` and `\n`; the reader keeps the unfinished line for the next chunk.
 */

import { MalformedReplyError } from './provider-http.js';

/** One event: its `event` field (absent for the default `message`) and its data. */
export interface SseEvent {
  readonly event?: string;
  readonly data: string;
}

/** The events of `body`, in order, until it ends. */
export async function* readSse(body: ReadableStream<Uint8Array>): AsyncGenerator<SseEvent> {
  const decoder = new TextDecoder();
  let buffer = '';
  let event: string | undefined;
  let data: string[] = [];
  const flush = (): SseEvent | undefined => {
    const out = data.length > 0 ? { ...(event !== undefined ? { event } : {}), data: data.join('\n') } : undefined;
    event = undefined;
    data = [];
    return out;
  };
  const line = (text: string): SseEvent | undefined => {
    if (text === '') return flush();
    if (text.startsWith(':')) return undefined;
    const colon = text.indexOf(':');
    const field = colon < 0 ? text : text.slice(0, colon);
    let value = colon < 0 ? '' : text.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'data') data.push(value);
    else if (field === 'event') event = value;
    return undefined;
  };
  const lineEnd = /\r\n|\n|\r(?!$)/g;
  for await (const chunk of body) {
    buffer += decoder.decode(chunk, { stream: true });
    // Lines are cut at a moving cursor and the buffer is sliced once per chunk, not once per line.
    let start = 0;
    let end: RegExpExecArray | null;
    lineEnd.lastIndex = 0;
    // A `\r` at the very end may be half of `\r\n`: wait for the next chunk before ending the line.
    while ((end = lineEnd.exec(buffer)) !== null) {
      const out = line(buffer.slice(start, end.index));
      start = end.index + end[0].length;
      if (out) yield out;
    }
    buffer = buffer.slice(start);
  }
  buffer += decoder.decode();
  for (const text of buffer.split(/\r\n|\n|\r/)) {
    const out = line(text);
    if (out) yield out;
  }
  const last = flush();
  if (last) yield last;
}

/** An event's data as JSON; data that is not JSON is a malformed reply. */
export function sseJson(event: SseEvent): unknown {
  try {
    return JSON.parse(event.data) as unknown;
  } catch {
    throw new MalformedReplyError(`a streamed event is not JSON (${JSON.stringify(event.data.slice(0, 40))})`);
  }
}
