/**
 * 10,000 random and mutated frames from one welcomed device to a live bridge (real NATS and Postgres). The bridge must
 * stay up, keep the connection, answer every frame that asks for an answer (and only those), and record nothing
 * false: no event for a call of another device or tenant, no call made up from an id, no outcome without a start.
 *
 * Frames go in batches, each closed by a probe (a second hello, answered with `unexpected_frame` only after every
 * frame before it was handled), so the answers of a batch can be counted against the frames that called for them.
 */
import { jest } from '@jest/globals';
import fc from 'fast-check';
import { WebSocket } from 'ws';
import {
  DeviceRequestState,
  ToolCallEventType,
  parseDeviceFrame,
  type DeviceFrame,
  type ReportRefusedV1,
} from '@ormuz/contracts';
import { replay, streamName } from '@ormuz/event-log';
import type { ToolCalls } from '@ormuz/service-kit';
import { waitFor } from '@ormuz/testing';
import { DeviceEventsRecorder } from '../src/index.js';
import { authorizeCall, startBridge, type BridgeUnderTest } from './bridge.fixture.js';

jest.setTimeout(90_000);

const TENANT = 'acme';
const OTHER_TENANT = 'globex';
const FRAMES = 10_000;
const BATCH = 100;
const SEED = 20261201;

/** Frames the bridge sends on its own, not as answers. */
const COMMANDS = new Set(['submit', 'status_query', 'seal', 'cancel']);
const DEVICE_TYPES = new Set(['hello', 'start_claim', 'progress', 'outcome', 'status_report', 'heartbeat', 'error']);

describe('fuzzing the device endpoint', () => {
  let bridge: BridgeUnderTest;
  let calls: ToolCalls;

  beforeAll(async () => {
    bridge = await startBridge(
      { DEVICE_TOKENS: `${TENANT}:phone-1:secret-1,${TENANT}:phone-2:secret-2,${OTHER_TENANT}:phone-1:secret-3` },
      'ormuz-fuzz-',
    );
    calls = bridge.calls;
  });
  afterAll(() => bridge.close());

  it('stays up, answers every frame that asks, and records nothing false', async () => {
    const own: string[] = [];
    const otherDevice: string[] = [];
    const otherTenant: string[] = [];
    const hashes = new Map<string, string>();
    for (let i = 0; i < 8; i++) {
      const mine = await authorizeCall(calls, TENANT, `fz-own-${i}`, 'device.screen_observe', {}, 'phone-1');
      own.push(mine.callId);
      hashes.set(mine.callId, mine.sha256);
      otherDevice.push(
        (await authorizeCall(calls, TENANT, `fz-dev-${i}`, 'device.screen_observe', {}, 'phone-2')).callId,
      );
      otherTenant.push(
        (await authorizeCall(calls, OTHER_TENANT, `fz-ten-${i}`, 'device.screen_observe', {}, 'phone-1')).callId,
      );
    }

    const ws = new WebSocket(bridge.url);
    const received: DeviceFrame[] = [];
    let closed: number | undefined;
    ws.on('message', (data: Buffer) => received.push(JSON.parse(data.toString('utf8')) as DeviceFrame));
    ws.on('close', (code) => {
      closed = code;
    });
    await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
    let seq = 0;
    const send = (frame: Record<string, unknown>) => ws.send(JSON.stringify({ v: 1, seq: ++seq, ...frame }));
    send({
      type: 'hello',
      device_id: 'phone-1',
      tenant: TENANT,
      boot_id: 'fuzz-boot',
      protocol_version: 1,
      policy_version: null,
      token: 'secret-1',
    });
    await waitFor(() => received.some((f) => f.type === 'welcome'), { message: 'the welcome' });

    // Ids: the device's own calls, another device's, another tenant's, unknown ones, and strings that are not ids.
    const validId = fc.constantFrom(...own, ...otherDevice, ...otherTenant, 'no-such-call', 'call_0000', 'x');
    const anyId = fc.oneof(
      { weight: 6, arbitrary: validId },
      { weight: 1, arbitrary: fc.constantFrom('a.b>', '', '*', 'a b', 'é', '\u0000', 'x'.repeat(129), '-lead') },
      { weight: 1, arbitrary: fc.string({ maxLength: 40 }) },
    );
    const wireError = fc.record({
      code: fc.constantFrom('payload_mismatch', 'request_conflict', 'internal', 'x', 'Bad-Code'),
      message: fc.string({ maxLength: 50 }),
    });
    const wellFormed = fc.oneof(
      fc.record({ type: fc.constant('start_claim'), request_id: anyId }),
      fc.oneof(
        fc.record({
          type: fc.constant('outcome'),
          request_id: anyId,
          status: fc.constant('succeeded'),
          result: fc.jsonValue({ maxDepth: 2 }),
        }),
        fc.record({ type: fc.constant('outcome'), request_id: anyId, status: fc.constant('failed'), error: wireError }),
      ),
      fc.record(
        {
          type: fc.constant('status_report'),
          request_id: anyId,
          state: fc.constantFrom(...DeviceRequestState.enum),
          payload_sha256: fc.constantFrom(...hashes.values(), 'f'.repeat(64)),
          reason: wireError,
        },
        { requiredKeys: ['type', 'request_id', 'state'] },
      ),
      fc.record(
        {
          type: fc.constant('progress'),
          request_id: anyId,
          stage: fc.string({ maxLength: 20 }),
          fraction: fc.double({ min: -1, max: 2, noNaN: true }),
        },
        { requiredKeys: ['type', 'request_id', 'stage'] },
      ),
      fc.record({ type: fc.constant('heartbeat') }),
      fc.record(
        {
          type: fc.constant('error'),
          code: fc.constantFrom('payload_mismatch', 'payload_invalid', 'internal'),
          message: fc.string({ minLength: 1, maxLength: 30 }),
          fatal: fc.boolean(),
          request_id: anyId,
        },
        { requiredKeys: ['type', 'code', 'message', 'fatal'] },
      ),
      fc.record({
        type: fc.constantFrom(
          'hello',
          'submit',
          'welcome',
          'start_granted',
          'outcome_ack',
          'seal',
          'cancel',
          'status_query',
          'nonsense',
          't'.repeat(300),
        ),
        request_id: anyId,
      }),
    );
    type Message = { text: string; binary?: boolean };
    const mutation = fc.oneof(
      { weight: 8, arbitrary: wellFormed.map((f): Message => ({ text: JSON.stringify({ v: 1, seq: 0, ...f }) })) },
      {
        weight: 1,
        arbitrary: fc
          .tuple(wellFormed, fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 1 }))
          .map(([f, k, v]): Message => ({
            text: JSON.stringify({ v: 1, seq: 0, ...f, [k === '' || k === 'v' || k === 'seq' ? 'extra' : k]: v }),
          })),
      },
      {
        weight: 1,
        arbitrary: fc
          .tuple(wellFormed, fc.constantFrom('v', 'type', 'request_id', 'status', 'state'))
          .map(([f, k]): Message => ({ text: JSON.stringify({ v: 1, seq: 0, ...f, [k]: undefined }) })),
      },
      { weight: 1, arbitrary: wellFormed.map((f): Message => ({ text: JSON.stringify({ v: 2, seq: 0, ...f }) })) },
      { weight: 1, arbitrary: wellFormed.map((f): Message => ({ text: JSON.stringify({ v: 1, seq: -1, ...f }) })) },
      { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 3 }).map((v): Message => ({ text: JSON.stringify(v) })) },
      { weight: 1, arbitrary: fc.string({ maxLength: 60 }).map((text): Message => ({ text })) },
      {
        weight: 1,
        arbitrary: fc
          .uint8Array({ maxLength: 20 })
          .map((b): Message => ({ text: Buffer.from(b).toString('base64'), binary: true })),
      },
    );
    const messages = fc.sample(mutation, { numRuns: FRAMES, seed: SEED });

    /** How many answers a message calls for: 0 or 1, judged from what the bridge can read of it. */
    function expectedAnswers(message: Message, sentSeq: number): number {
      if (message.binary) return 1;
      let value: unknown;
      try {
        value = JSON.parse(message.text);
      } catch {
        return 1;
      }
      const frame = value as Record<string, unknown> | null;
      if (typeof frame !== 'object' || frame === null || Array.isArray(frame)) return 1;
      if (frame['v'] !== 1 || typeof frame['type'] !== 'string' || !DEVICE_TYPES.has(frame['type'])) return 1;
      if (frame['seq'] !== sentSeq) return 1; // invalid or not increasing: refused, answered
      // Readable device frames: claims, outcomes and second hellos are answered; reports, progress, heartbeats and
      // errors are not. A frame that fails its schema is answered with `schema` whatever its type.
      const answered = frame['type'] === 'start_claim' || frame['type'] === 'outcome' || frame['type'] === 'hello';
      return answered || !schemaValid(frame) ? 1 : 0;
    }
    /** The contract's own verdict on a frame (the parser both sides use). */
    function schemaValid(frame: Record<string, unknown>): boolean {
      try {
        parseDeviceFrame(JSON.stringify(frame));
        return true;
      } catch {
        return false;
      }
    }

    const started = Date.now();
    for (let from = 0; from < messages.length; from += BATCH) {
      const batch = messages.slice(from, from + BATCH);
      const before = received.length;
      let expected = 0;
      for (const message of batch) {
        const frameSeq = ++seq;
        const withSeq = message.binary ? message.text : message.text.replace('"seq":0', `"seq":${frameSeq}`);
        expected += expectedAnswers({ ...message, text: withSeq }, frameSeq);
        if (message.binary) ws.send(Buffer.from(withSeq, 'base64'));
        else ws.send(withSeq);
      }
      send({
        type: 'hello',
        device_id: 'p',
        tenant: 'p',
        boot_id: 'p',
        protocol_version: 1,
        policy_version: null,
        token: 'p',
      });
      const isProbe = (f: DeviceFrame) =>
        f.type === 'error' && f.code === 'unexpected_frame' && f.message.includes('already said hello');
      await waitFor(() => received.slice(before).some(isProbe), {
        message: `the probe after frame ${from + batch.length}`,
        timeoutMs: 20_000,
        intervalMs: 2,
      });
      const answers = received.slice(before).filter((f) => !COMMANDS.has(f.type));
      expect({ at: from, answers: answers.length - 1 }).toEqual({ at: from, answers: expected });
      expect(closed).toBeUndefined();
    }
    const elapsed = Date.now() - started;

    // Still up, and still serving: a new device connects and is welcomed.
    const probe = new WebSocket(bridge.url);
    const welcome = new Promise<DeviceFrame>((resolve) =>
      probe.on('message', (d: Buffer) => resolve(JSON.parse(d.toString('utf8')) as DeviceFrame)),
    );
    await new Promise((resolve) => probe.once('open', resolve));
    probe.send(
      JSON.stringify({
        v: 1,
        seq: 1,
        type: 'hello',
        device_id: 'phone-2',
        tenant: TENANT,
        boot_id: 'b',
        protocol_version: 1,
        policy_version: null,
        token: 'secret-2',
      }),
    );
    expect((await welcome).type).toBe('welcome');
    probe.close();
    ws.close();

    // Nothing false on the log: other devices' and tenants' calls untouched, no call made up, no outcome unstarted.
    const perCall = new Map<string, { types: string[]; executor?: string }>();
    for await (const item of replay(bridge.svc.infra.js, {
      stream: streamName(bridge.namespace, 'calls'),
      filterSubject: `${bridge.namespace}.calls.>`,
    })) {
      const event = item.event!;
      const entry = perCall.get(`${event.tenant}/${event.subject}`) ?? { types: [] };
      entry.types.push(event.type);
      if (event.type === ToolCallEventType.Started)
        entry.executor = (event.data as { executor_id: string }).executor_id;
      perCall.set(`${event.tenant}/${event.subject}`, entry);
    }
    const known = new Set(
      [...own, ...otherDevice].map((id) => `${TENANT}/${id}`).concat(otherTenant.map((id) => `${OTHER_TENANT}/${id}`)),
    );
    expect([...perCall.keys()].filter((k) => !known.has(k))).toEqual([]);
    for (const id of otherDevice)
      expect(perCall.get(`${TENANT}/${id}`)?.types).toEqual([
        ToolCallEventType.Requested,
        ToolCallEventType.Authorized,
      ]);
    for (const id of otherTenant)
      expect(perCall.get(`${OTHER_TENANT}/${id}`)?.types).toEqual([
        ToolCallEventType.Requested,
        ToolCallEventType.Authorized,
      ]);
    for (const id of own) {
      const { types, executor } = perCall.get(`${TENANT}/${id}`)!;
      const firstOutcome = types.findIndex((t) => t === ToolCallEventType.Succeeded || t === ToolCallEventType.Failed);
      if (firstOutcome >= 0) {
        expect(types.indexOf(ToolCallEventType.Started)).toBeGreaterThan(-1);
        expect(types.indexOf(ToolCallEventType.Started)).toBeLessThan(firstOutcome);
        expect(executor).toBe('phone-1');
      }
    }
    // The refusals are on the record.
    const refused = (await bridge.svc.app.get(DeviceEventsRecorder).history(TENANT, 'phone-1'))
      .map((r) => r.event.data as ReportRefusedV1)
      .filter((d) => 'reason' in d);
    expect(new Set(refused.map((r) => r.reason))).toEqual(new Set(['not_assigned', 'unknown_request', 'not_started']));
    process.stdout.write(`fuzz: ${FRAMES} frames in ${elapsed} ms, ${refused.length} refusals recorded\n`);
  });
});
