import fc from 'fast-check';
import { sha256Hex } from './canonical.js';
import {
  DEVICE_MAX_FRAME_BYTES,
  DeviceFrameCodec,
  DeviceProtocolError,
  encodeDeviceFrame,
  isDeviceProtocolError,
  parseDeviceFrame,
  verifySubmitPayload,
  type DeviceProtocolErrorCode,
  type SubmitFrameV1,
} from './device-protocol.js';

const payload = '{"body":"On my way","to":"Alice"}';
const submit: SubmitFrameV1 = {
  v: 1,
  seq: 1,
  type: 'submit',
  request_id: 'req-1',
  call_id: 'call-1',
  tool: 'device.send_message',
  payload,
  payload_sha256: sha256Hex(payload),
  deadline: '2030-01-01T00:00:00.000Z',
  verdict: { level: 'low', reasons: [] },
};

function parseError(text: string, maxBytes?: number): DeviceProtocolError {
  try {
    parseDeviceFrame(text, maxBytes);
  } catch (err) {
    if (err instanceof DeviceProtocolError) return err;
    throw err;
  }
  throw new Error('expected the frame to be refused');
}

function expectCode(text: string, code: DeviceProtocolErrorCode, maxBytes?: number): DeviceProtocolError {
  const err = parseError(text, maxBytes);
  expect(err.code).toBe(code);
  return err;
}

describe('parseDeviceFrame', () => {
  it('reads a valid submit', () => {
    expect(parseDeviceFrame(JSON.stringify(submit))).toEqual(submit);
  });

  it('refuses text that is not JSON and says how frames are sent', () => {
    expect(expectCode('{"v":1,', 'malformed_json').message).toMatch(/one JSON object per WebSocket text message/);
  });

  it('refuses JSON that is not an object', () => {
    expect(expectCode('[1,2]', 'schema').message).toMatch(/an array/);
    expect(expectCode('null', 'schema').message).toMatch(/null/);
  });

  it('refuses fields of the wrong type and names them', () => {
    const err = expectCode(
      JSON.stringify({ ...submit, seq: '1', verdict: { level: 'severe', reasons: [] } }),
      'schema',
    );
    expect(err.message).toMatch(/seq must be integer/);
    expect(err.message).toMatch(/verdict\.level/);
    expect(err.requestId).toBe('req-1');
  });

  it('refuses unknown properties, since a new field is a new protocol version', () => {
    expect(expectCode(JSON.stringify({ ...submit, priority: 1 }), 'schema').message).toMatch(
      /unexpected property 'priority'/,
    );
  });

  it('reads a W3C traceparent on a submit and an outcome, and refuses one that is not', () => {
    const traceparent = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
    expect(parseDeviceFrame(JSON.stringify({ ...submit, traceparent }))).toMatchObject({ traceparent });
    const outcome = { v: 1, seq: 2, type: 'outcome', request_id: 'req-1', status: 'succeeded', result: null };
    expect(parseDeviceFrame(JSON.stringify({ ...outcome, traceparent }))).toMatchObject({ traceparent });
    for (const bad of [
      '00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01',
      `00-${'0'.repeat(32)}-00f067aa0ba902b7-01`,
      'x',
    ]) {
      expect(expectCode(JSON.stringify({ ...submit, traceparent: bad }), 'schema').message).toMatch(/traceparent/);
    }
  });

  it('refuses ids that could escape a NATS subject', () => {
    expect(expectCode(JSON.stringify({ ...submit, request_id: 'a.>' }), 'schema').message).toMatch(/request_id/);
  });

  it('refuses an outcome that carries both a result and an error', () => {
    const both = {
      v: 1,
      seq: 2,
      type: 'outcome',
      request_id: 'r',
      status: 'succeeded',
      result: 1,
      error: { code: 'x', message: 'y' },
    };
    expectCode(JSON.stringify(both), 'schema');
    const { error: _error, ...succeeded } = both;
    expect(parseDeviceFrame(JSON.stringify(succeeded)).type).toBe('outcome');
  });

  it('refuses a frame larger than the limit before parsing it', () => {
    const big = JSON.stringify({ ...submit, payload: `"${'x'.repeat(DEVICE_MAX_FRAME_BYTES)}"` });
    expect(expectCode(big, 'oversized').message).toMatch(/limit is 262144 bytes/);
    expectCode('{"v":1,"seq":1,"type":"heartbeat","pad":"ééééé"}', 'oversized', 40);
  });

  it('refuses another protocol version or a missing one', () => {
    expect(expectCode(JSON.stringify({ ...submit, v: 2 }), 'unsupported_version').message).toMatch(
      /version 2.*version 1/,
    );
    const { v: _v, ...unversioned } = submit;
    expectCode(JSON.stringify(unversioned), 'unsupported_version');
  });

  it('refuses a frame type the protocol does not have', () => {
    expect(expectCode('{"v":1,"seq":1,"type":"execute"}', 'unknown_type').message).toMatch(/known types are hello/);
  });

  it('refuses a submit whose hash does not match its payload, naming the request', () => {
    const tampered = { ...submit, payload: '{"body":"Send 500 EUR","to":"Alice"}' };
    const err = expectCode(JSON.stringify(tampered), 'payload_mismatch');
    expect(err.requestId).toBe('req-1');
    expect(err.message).toMatch(/nothing was run/);
  });

  it('only ever throws DeviceProtocolError, whatever the text', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string(),
          fc.json(),
          fc.jsonValue().map((v) => JSON.stringify({ v: 1, seq: 1, type: 'submit', x: v })),
        ),
        (text) => {
          try {
            parseDeviceFrame(text);
          } catch (err) {
            expect(isDeviceProtocolError(err)).toBe(true);
          }
        },
      ),
    );
  });
});

describe('encodeDeviceFrame', () => {
  it('round-trips through parseDeviceFrame', () => {
    expect(parseDeviceFrame(encodeDeviceFrame(submit))).toEqual(submit);
  });

  it('refuses to put an invalid frame on the wire', () => {
    expect(() => encodeDeviceFrame({ ...submit, payload_sha256: sha256Hex('other') })).toThrow(/nothing was run/);
  });
});

describe('verifySubmitPayload', () => {
  it('returns the arguments object', () => {
    expect(verifySubmitPayload(submit)).toEqual({ body: 'On my way', to: 'Alice' });
  });

  it('refuses a payload that is not an object of arguments', () => {
    const list = '[1]';
    expect(() => verifySubmitPayload({ ...submit, payload: list, payload_sha256: sha256Hex(list) })).toThrow(
      expect.objectContaining({ code: 'payload_invalid' }),
    );
  });
});

describe('DeviceFrameCodec', () => {
  it('numbers outgoing frames from 1', () => {
    const codec = new DeviceFrameCodec();
    expect(JSON.parse(codec.encode({ type: 'heartbeat' }))).toEqual({ v: 1, seq: 1, type: 'heartbeat' });
    expect(JSON.parse(codec.encode({ type: 'seal', request_id: 'r1' })).seq).toBe(2);
  });

  it('does not consume a seq for a draft that fails to encode', () => {
    const codec = new DeviceFrameCodec();
    expect(() => codec.encode({ type: 'seal', request_id: 'bad id' })).toThrow(DeviceProtocolError);
    expect(JSON.parse(codec.encode({ type: 'heartbeat' })).seq).toBe(1);
  });

  it('refuses a frame whose seq does not increase, and accepts gaps', () => {
    const codec = new DeviceFrameCodec();
    codec.decode('{"v":1,"seq":1,"type":"heartbeat"}');
    codec.decode('{"v":1,"seq":3,"type":"heartbeat"}');
    expect(() => codec.decode('{"v":1,"seq":3,"type":"start_claim","request_id":"r1"}')).toThrow(
      expect.objectContaining({ code: 'out_of_order', requestId: 'r1' }),
    );
    expect(codec.lastReceivedSeq).toBe(3);
  });
});
