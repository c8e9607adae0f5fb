/* global fetch, TextDecoderStream */
// Server-sent events read with fetch. EventSource cannot send an Authorization header, and a token in the URL would
// be written to access logs, proxies and the browser's history; fetch sends the header like every other request of
// the page, and reads the response body as it arrives.

/** Why a stream stopped for good: the server refused the credential (401/403) or said the token expired. */
export class StreamRefused extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

/**
 * Reads `url` as an event stream until `signal` aborts, calling `onEvent(name, data)` for each event (data parsed as
 * JSON) and `onState('connecting' | 'live' | 'retrying')` as the connection changes. A dropped connection is opened
 * again after a growing pause (1 s, doubling up to 15 s); the server sends a fresh snapshot on every connection, so
 * nothing is missed in between. Resolves when aborted; rejects with StreamRefused when the credential is refused.
 */
export async function readEventStream({ url, headers, signal, onEvent, onState }) {
  let pause = 1000;
  while (!signal.aborted) {
    onState('connecting');
    try {
      const res = await fetch(url, { headers: { ...headers, accept: 'text/event-stream' }, signal, cache: 'no-store' });
      if (res.status === 401 || res.status === 403) {
        const body = await res.json().catch(() => ({}));
        throw new StreamRefused(res.status, body.error?.message ?? `The server answered ${res.status}.`);
      }
      if (!res.ok || !res.body) throw new Error(`The server answered ${res.status}.`);
      onState('live');
      pause = 1000;
      const ended = await readEvents(res.body, onEvent);
      if (ended) throw new StreamRefused(401, ended.message ?? 'Your token expired: sign in again.');
    } catch (err) {
      if (err instanceof StreamRefused) throw err;
      if (signal.aborted) return;
    }
    onState('retrying');
    await new Promise((resolve) => {
      const timer = setTimeout(resolve, pause);
      signal.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
    });
    pause = Math.min(pause * 2, 15_000);
  }
}

/** Parses the body's events; returns the `end` event's data if the server ended the stream with one. */
async function readEvents(body, onEvent) {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return undefined;
    buffer += value.replace(/\r\n?/g, '\n');
    let boundary;
    while ((boundary = buffer.indexOf('\n\n')) >= 0) {
      const block = buffer.slice(0, boundary);
      buffer = buffer.slice(boundary + 2);
      let name = 'message';
      const data = [];
      for (const line of block.split('\n')) {
        if (line.startsWith(':')) continue; // a comment: the server's keep-alive
        const colon = line.indexOf(':');
        const field = colon < 0 ? line : line.slice(0, colon);
        const text = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
        if (field === 'event') name = text;
        else if (field === 'data') data.push(text);
      }
      if (data.length === 0) continue;
      const parsed = JSON.parse(data.join('\n'));
      if (name === 'end') return parsed;
      onEvent(name, parsed);
    }
  }
}
