import { headers, type NatsConnection } from '@nats-io/transport-node';
import { pino } from 'pino';
import { commandSubject, type AuditExportReplyV1 } from '@ormuz/contracts';
import { connectNats } from '@ormuz/event-log';
import { randomNamespace, testEnv } from '@ormuz/testing';
import {
  createAuthenticator,
  NatsRpcServer,
  PART_HEADER,
  PARTS_HEADER,
  RemoteError,
  ServiceUnavailableError,
  StreamedReply,
  streamRpc,
  type ReplyPart,
} from '../src/index.js';
import { loadBaseConfig } from '../src/config.js';

const text = new TextEncoder();
const request = { tenant: 'acme', context: 'calls' as const };
const end: AuditExportReplyV1 = { count: 3, next: null, high_seq: 9 };

describe('streamed replies', () => {
  let nc: NatsConnection;
  const namespace = randomNamespace('streamed');
  let server: NatsRpcServer;
  /** What the `audit.export` handler of the server under test does for the next request. */
  let handle: () => AsyncGenerator<ReplyPart, AuditExportReplyV1>;

  beforeAll(async () => {
    nc = await connectNats({ url: testEnv().natsUrl, name: 'streamed-reply-test' });
    const config = loadBaseConfig({ ORMUZ_NAMESPACE: namespace, NATS_URL: testEnv().natsUrl });
    server = new NatsRpcServer(nc, namespace, 'audit', pino({ level: 'silent' }), createAuthenticator(config));
    server.addHandler('export', async () => StreamedReply.of(handle()));
    await new Promise<void>((resolve) => server.listen(resolve));
    await nc.flush();
  });
  afterAll(async () => {
    server.close();
    await nc.drain();
  });

  /** Reads a whole streamed reply: the parts' text and headers, then the final data or the error. */
  async function read(ns = namespace) {
    const parts: { text: string; part: string; kind: string }[] = [];
    const stream = streamRpc(nc, ns, 'audit.export', request, { idleMs: 5000 });
    try {
      for (;;) {
        const next = await stream.next();
        if (next.done) return { parts, data: next.value };
        const body = new TextDecoder().decode(next.value.body);
        parts.push({ text: body, part: next.value.headers.get(PART_HEADER), kind: next.value.headers.get('Kind') });
      }
    } catch (err) {
      return { parts, err: err as Error };
    }
  }

  const part = (s: string): ReplyPart => ({ body: text.encode(s), headers: { Kind: 'lines' } });

  it("sends each part in order with its headers, then the handler's return value as the reply", async () => {
    handle = async function* () {
      yield part('a\n');
      yield part('b\nc\n');
      return end;
    };
    expect(await read()).toEqual({
      parts: [
        { text: 'a\n', part: '1', kind: 'lines' },
        { text: 'b\nc\n', part: '2', kind: 'lines' },
      ],
      data: end,
    });
  });

  it('ends with the error reply when the handler fails after some parts', async () => {
    handle = async function* () {
      yield part('a\n');
      throw Object.assign(new Error('the archive went away'), { code: 'postgres_unavailable' });
    };
    const { parts, err } = await read();
    expect(parts.map((p) => p.text)).toEqual(['a\n']);
    expect(err).toBeInstanceOf(RemoteError);
    expect(err).toMatchObject({ code: 'postgres_unavailable', message: 'the archive went away' });
  });

  it('sends many parts without losing one (the server flushes as it goes)', async () => {
    const count = 200;
    handle = async function* () {
      for (let i = 0; i < count; i++) yield part(`${'x'.repeat(64 * 1024)}${i}\n`);
      return { ...end, count };
    };
    const { parts, data } = await read();
    expect(data).toEqual({ ...end, count });
    expect(parts.map((p) => Number(p.part))).toEqual(Array.from({ length: count }, (_, i) => i + 1));
  });

  describe('a reply that loses parts on the way', () => {
    const other = randomNamespace('streamed_raw');
    /** A responder on `other` that sends the parts numbered `numbers`, then a final reply counting `counted`. */
    function rawResponder(numbers: number[], counted: number) {
      return nc.subscribe(commandSubject(other, 'audit', 'export'), {
        callback: (_e, m) => {
          for (const n of numbers) {
            const h = headers();
            h.set(PART_HEADER, String(n));
            nc.publish(m.reply!, text.encode(`${n}\n`), { headers: h });
          }
          const h = headers();
          h.set(PARTS_HEADER, String(counted));
          m.respond(JSON.stringify({ ok: true, data: end }), { headers: h });
        },
      });
    }

    it.each([
      ['a part missing between two', [1, 3], 3, /1 arrived in order, and part 3 came next/],
      ['parts missing at the end', [1], 2, /1 arrived in order, and the service sent 2/],
    ])('is an error, not a hole: %s', async (_case, numbers, counted, message) => {
      const responder = rawResponder(numbers, counted);
      await nc.flush();
      try {
        const { err } = await read(other);
        expect(err).toBeInstanceOf(ServiceUnavailableError);
        expect(err!.message).toMatch(/parts of the reply were lost/);
        expect(err!.message).toMatch(message);
      } finally {
        responder.unsubscribe();
      }
    });
  });

  it('serves no request whose reply subject is not an inbox (a reply there could pass for an event)', async () => {
    handle = async function* () {
      yield part('{"type":"ormuz.toolcall.succeeded.v1"}\n');
      return end;
    };
    const forged = `${namespace}.calls.acme.call.call_forged`;
    const landed: string[] = [];
    const onLog = nc.subscribe(forged, { callback: (_e, m) => void landed.push(m.string()) });
    await nc.flush();
    nc.publish(commandSubject(namespace, 'audit', 'export'), JSON.stringify(request), { reply: forged });
    // Served after the forged one (one server, in order): once its reply is read, the forged one was dealt with.
    expect((await read()).data).toEqual(end);
    await nc.flush();
    onLog.unsubscribe();
    expect(landed).toEqual([]);
  });

  it('says no instance is listening when none is', async () => {
    const { err } = await read(randomNamespace('streamed_nobody'));
    expect(err).toBeInstanceOf(ServiceUnavailableError);
    expect(err).toMatchObject({ noAnswer: 'no_responders' });
  });
});
