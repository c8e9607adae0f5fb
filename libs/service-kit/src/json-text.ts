/**
 * A reply's data already written as JSON text (by Postgres, say): the NATS command server sends the text as it is, so
 * a large page is not parsed and serialised again on its way through a service. Anything else that serialises it
 * (an HTTP response, a log line) gets the value the text stands for.
 */
export class JsonText<T> {
  private constructor(readonly text: string) {}

  /** `text` (valid JSON, unchecked) as the reply it stands for, for a handler's declared return type. */
  static of<T>(text: string): T {
    return new JsonText<T>(text) as unknown as T;
  }

  toJSON(): T {
    return JSON.parse(this.text) as T;
  }
}
