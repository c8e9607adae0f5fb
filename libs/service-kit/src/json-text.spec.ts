import { JsonText } from './json-text.js';

describe('JsonText', () => {
  it('keeps the text it was given, for the NATS server to send as it is', () => {
    const text = '{"events":[{"seq":1,"data":{"a": 1}}],"next":null}';
    const value = JsonText.of<unknown>(text);
    expect(value).toBeInstanceOf(JsonText);
    expect((value as JsonText<unknown>).text).toBe(text);
  });

  it('serialises elsewhere (an HTTP body, a log line) as the value the text stands for', () => {
    const value = JsonText.of<{ events: unknown[] }>('{"events":[{"seq":1,"data":{"a": 1}}]}');
    expect(JSON.parse(JSON.stringify({ ok: true, data: value }))).toEqual({
      ok: true,
      data: { events: [{ seq: 1, data: { a: 1 } }] },
    });
  });
});
