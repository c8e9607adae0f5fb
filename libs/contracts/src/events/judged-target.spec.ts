import { sha256Hex } from '../canonical.js';
import { parseDeviceFrame } from '../device-protocol.js';
import { assertValid } from '../schema-registry.js';
import { ToolCallEventType as T } from './tool-call.events.js';

const CALL = 'call_0123456789abcdef0123456789abcdef';
const judged_on = { foreground_package: 'com.example.messages', target_text: 'Send', source: 'observation' };
const authorized = (verdict: unknown) => ({ call_id: CALL, verdict, approval_id: null });

describe('verdict.judged_on: what a screen action was judged on', () => {
  it('is optional on authorized and staged verdicts, and kept when given', () => {
    expect(() => assertValid(T.Authorized, authorized({ level: 'low', reasons: [] }))).not.toThrow();
    expect(() => assertValid(T.Authorized, authorized({ level: 'low', reasons: [], judged_on }))).not.toThrow();
    expect(() =>
      assertValid(
        T.Authorized,
        authorized({ level: 'low', reasons: [], judged_on: { ...judged_on, target_text: null } }),
      ),
    ).not.toThrow();
  });

  it.each([
    ['an unknown source', { ...judged_on, source: 'model' }],
    ['no app', { target_text: 'Send', source: 'observation' }],
    ['an extra field', { ...judged_on, ref: 'e4' }],
    ['a text longer than 2000 characters', { ...judged_on, target_text: 'x'.repeat(2001) }],
  ])('refuses a judged_on with %s', (_what, bad) => {
    expect(() => assertValid(T.Authorized, authorized({ level: 'low', reasons: [], judged_on: bad }))).toThrow();
  });

  it('travels in the submit frame, validated there like in the events', () => {
    const payload = '{"foreground_package":"com.example.messages","x":540,"y":600}';
    const frame = {
      v: 1,
      seq: 1,
      type: 'submit',
      request_id: 'req-1',
      call_id: 'call-1',
      tool: 'device.tap',
      payload,
      payload_sha256: sha256Hex(payload),
      deadline: '2030-01-01T00:00:00.000Z',
      verdict: { level: 'high', reasons: ['target text means send'], judged_on },
    };
    expect(parseDeviceFrame(JSON.stringify(frame))).toEqual(frame);
    expect(() =>
      parseDeviceFrame(
        JSON.stringify({ ...frame, verdict: { ...frame.verdict, judged_on: { ...judged_on, source: 'x' } } }),
      ),
    ).toThrow();
  });
});
