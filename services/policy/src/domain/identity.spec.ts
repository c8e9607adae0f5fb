import { callIdOf, identifyCall } from './identity.js';

const origin = (index: number) => ({ kind: 'conversation' as const, conversation_id: 'conv-1', turn: 2, index });

describe('identifyCall', () => {
  it.each([
    ['device.send_message', 'device.send_message'],
    ['device__send_message', 'device.send_message'],
    ['device.sendMessage@2', 'device.sendMessage@2'],
    ['weather__forecast', 'weather.forecast'],
    ['weather.forecast', 'weather.forecast'],
    ['send message', 'send message'],
  ])('shows %j as %j: as sent, a provider encoding decoded', (sent, shown) => {
    expect(identifyCall('acme', { tool: sent, origin: origin(0) }).tool).toBe(shown);
  });

  it('gives the id of the origin, whatever the tool, the id a submit from that origin records', () => {
    const a = identifyCall('acme', { tool: 'device.tap', origin: origin(0) });
    const b = identifyCall('acme', { tool: 'device.swipe', origin: origin(0) });
    expect(a.call_id).toBe(b.call_id);
    expect(a.call_id).toBe(callIdOf('acme', origin(0)));
    expect(identifyCall('acme', { tool: 'device.tap', origin: origin(1) }).call_id).not.toBe(a.call_id);
    expect(identifyCall('globex', { tool: 'device.tap', origin: origin(0) }).call_id).not.toBe(a.call_id);
  });
});
