/**
 * `GET /v1/tenants/{tenant}/events`, read by a real HTTP client as it streams: the tenant's events and no other's,
 * one server-sent event per stream message with the stream sequence as its id, resumption with Last-Event-ID and from
 * a sequence or a time, the edge's own access check, and the consumer gone once the client disconnects.
 */
import { tenantFilter, type TenantEventsMessageV1 } from '@ormuz/contracts';
import { streamName } from '@ormuz/event-log';
import { testToken, waitFor } from '@ormuz/testing';
import { ApiPlatform } from './api.fixture.js';

interface ServerSentEvent {
  readonly id: string | undefined;
  readonly data: TenantEventsMessageV1;
}

/** Reads a text/event-stream response as it arrives, the way an EventSource parses it. */
class EventStreamClient {
  readonly events: ServerSentEvent[] = [];
  ended = false;
  /** The data of the `end` event the server closed the stream with, if it did. */
  end: { reason: string; message: string } | undefined;
  private buffer = '';

  private constructor(
    readonly status: number,
    readonly contentType: string | null,
    private readonly abort: AbortController,
    body: ReadableStream<Uint8Array> | null,
  ) {
    if (body && status === 200) void this.pump(body);
  }

  static async open(url: string, headers: Record<string, string>): Promise<EventStreamClient> {
    const abort = new AbortController();
    const res = await fetch(url, { headers: { accept: 'text/event-stream', ...headers }, signal: abort.signal });
    return new EventStreamClient(
      res.status,
      res.headers.get('content-type'),
      abort,
      res.status === 200 ? res.body : null,
    );
  }

  /** Waits for the first event that `matches`, among those received so far and later. */
  next(matches: (e: ServerSentEvent) => boolean, what: string): Promise<ServerSentEvent> {
    return waitFor(() => this.events.find(matches), { message: what });
  }

  /** Disconnects, as a closed browser tab would. */
  close(): void {
    this.abort.abort();
  }

  private async pump(body: ReadableStream<Uint8Array>): Promise<void> {
    const decoder = new TextDecoder();
    const reader = body.getReader();
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        this.buffer += decoder.decode(value, { stream: true });
        let end: number;
        while ((end = this.buffer.indexOf('\n\n')) >= 0) {
          const block = this.buffer.slice(0, end);
          this.buffer = this.buffer.slice(end + 2);
          const fields = block.split('\n').filter((line) => !line.startsWith(':'));
          const field = (name: string) =>
            fields.filter((l) => l.startsWith(`${name}:`)).map((l) => l.slice(name.length + 1).replace(/^ /, ''));
          const data = field('data');
          if (data.length > 0 && field('event')[0] === 'end')
            this.end = JSON.parse(data.join('\n')) as NonNullable<typeof this.end>;
          else if (data.length > 0)
            this.events.push({ id: field('id')[0], data: JSON.parse(data.join('\n')) as TenantEventsMessageV1 });
        }
      }
    } catch {
      // Aborted by close().
    } finally {
      this.ended = true;
    }
  }
}

describe("a tenant's events as server-sent events", () => {
  const platform = new ApiPlatform();
  let analyst: string;
  const streams: EventStreamClient[] = [];

  beforeAll(async () => {
    await platform.open(['policy']);
    analyst = await platform.bearer('acme', ['analyst'], 'ana@acme');
  });
  afterEach(async () => {
    if (streams.length === 0) return;
    for (const s of streams.splice(0)) s.close();
    await waitFor(async () => (await acmeReaders()) === 0, { message: "the closed streams' consumers to be deleted" });
  });
  afterAll(() => platform.close());

  const open = async (query = '', headers: Record<string, string> = {}, tenant = 'acme') => {
    const stream = await EventStreamClient.open(`${platform.url}/v1/tenants/${tenant}/events${query}`, {
      authorization: analyst,
      ...headers,
    });
    streams.push(stream);
    return stream;
  };

  /** Submits a low-risk call for `tenant` over the API, as its operator; returns its id. */
  const submit = async (tenant: string, operationId: string): Promise<string> => {
    const answer = await platform.request<{ call_id: string }>('POST', `/v1/tenants/${tenant}/calls`, {
      authorization: await platform.bearer(tenant, ['operator'], `ops@${tenant}`),
      json: {
        agent_id: 'agent-1',
        tool: 'device.screen_observe',
        arguments: {},
        origin: { kind: 'operation', operation_id: operationId },
        device_id: 'phone-1',
      },
    });
    expect(answer.status).toBe(200);
    return answer.body.call_id;
  };
  const about = (callId: string) => (e: ServerSentEvent) => e.data.events.some((event) => event.subject === callId);

  /** Consumers reading acme's calls for a stream (the services' own durable consumers read the whole stream). */
  async function acmeReaders(): Promise<number> {
    const filter = tenantFilter(platform.namespace, 'calls', 'acme');
    const consumers = await platform.jsm.consumers.list(streamName(platform.namespace, 'calls')).next();
    return consumers.filter((c) => c.config.filter_subject === filter || c.config.filter_subjects?.includes(filter))
      .length;
  }

  let firstSeq: number;
  let startedAt: string;

  it("streams the tenant's events as they are appended, one event per stream message with its sequence as id, and no other tenant's", async () => {
    startedAt = new Date().toISOString();
    const stream = await open();
    expect(stream.status).toBe(200);
    expect(stream.contentType).toMatch(/^text\/event-stream/);
    const other = await submit('globex', 'op-events-globex');
    const mine = await submit('acme', 'op-events-1');
    const event = await stream.next(about(mine), `the events of ${mine}`);
    expect(event.id).toBe(String(event.data.seq));
    expect(event.data.context).toBe('calls');
    // One decision, one message: the request and the gate's decision arrive together.
    expect(event.data.events.map((e) => e.type)).toEqual([
      'ormuz.toolcall.requested.v1',
      'ormuz.toolcall.authorized.v1',
    ]);
    expect(stream.events.flatMap((e) => e.data.events).every((e) => e.tenant === 'acme')).toBe(true);
    expect(stream.events.some(about(other))).toBe(false);
    firstSeq = event.data.seq;
  });

  it('resumes after Last-Event-ID, and starts at a sequence or a time', async () => {
    const later = await submit('acme', 'op-events-2');
    const resumed = await open('', { 'last-event-id': String(firstSeq) });
    const next = await resumed.next(about(later), `the events of ${later} after ${firstSeq}`);
    expect(resumed.events[0]).toBe(next);
    expect(next.data.seq).toBeGreaterThan(firstSeq);

    const fromSeq = await open(`?from=${firstSeq}`);
    await fromSeq.next(about(later), `the events of ${later} from ${firstSeq}`);
    expect(fromSeq.events[0]!.data.seq).toBe(firstSeq);

    const fromTime = await open(`?from=${encodeURIComponent(startedAt)}`);
    await fromTime.next(about(later), `the events of ${later} since ${startedAt}`);
    expect(fromTime.events[0]!.data.seq).toBe(firstSeq);
  });

  it('deletes its consumer when the client disconnects', async () => {
    const stream = await open(`?from=${firstSeq}`);
    await stream.next((e) => e.data.seq === firstSeq, 'the first event');
    expect(await acmeReaders()).toBe(1);
    stream.close();
    await waitFor(async () => (await acmeReaders()) === 0, { message: "the stream's consumer to be deleted" });
  });

  it('lets analysts, operators and admins read it, and refuses everyone else', async () => {
    const status = async (authorization: string | undefined, tenant = 'acme') =>
      (await open('', authorization ? { authorization } : { authorization: '' }, tenant)).status;
    expect(await status(await platform.bearer('acme', ['operator']))).toBe(200);
    expect(await status(await platform.bearer('acme', ['admin']))).toBe(200);
    expect(await status(undefined)).toBe(401);
    expect(await status(await platform.bearer('acme', ['owner']))).toBe(403);
    expect(await status(await platform.bearer('globex', ['admin']))).toBe(403);
    expect(await status(await platform.bearer('*', ['admin']), 'globex')).toBe(200);
  });

  it('refuses a start it cannot read with 400, in JSON', async () => {
    for (const [query, headers, says] of [
      ['?from=yesterday', {}, 'from'],
      ['?context=everything', {}, 'context'],
      ['?follow=true', {}, "'follow' is not one this route takes"],
      ['', { 'last-event-id': 'abc' }, 'Last-Event-ID'],
    ] as const) {
      const answer = await platform.request<{ error: { code: string; message: string } }>(
        'GET',
        `/v1/tenants/acme/events${query}`,
        { authorization: analyst, headers },
      );
      expect({ query, status: answer.status, says: answer.body.error.message.includes(says) }).toEqual({
        query,
        status: 400,
        says: true,
      });
    }
  });

  it('ends the stream when the token that opened it expires, with an end event saying so, and deletes its consumer', async () => {
    const brief = await testToken({ tenant: 'acme', roles: ['analyst'], subject: 'ana@acme', ttlSeconds: 2 });
    const stream = await open(`?from=${firstSeq}`, { authorization: `Bearer ${brief}` });
    expect(stream.status).toBe(200);
    await stream.next((e) => e.data.seq === firstSeq, 'the first event');
    await waitFor(() => stream.ended, { message: "the stream to end at the token's exp", timeoutMs: 15_000 });
    expect(stream.end).toEqual({ reason: 'token_expired', message: expect.stringContaining('expired') });
    await waitFor(async () => (await acmeReaders()) === 0, { message: "the ended stream's consumer to be deleted" });
  });

  it('ends its open streams when the service stops, so a shutdown never waits on a client', async () => {
    const stream = await open(`?from=${firstSeq}`);
    await stream.next((e) => e.data.seq === firstSeq, 'the first event');
    await platform.close();
    await waitFor(() => stream.ended, { message: 'the stream to end with the service' });
    streams.splice(streams.indexOf(stream), 1); // nothing left to clean up after this test
  });
});
