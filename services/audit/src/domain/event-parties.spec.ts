import { NO_PARTIES, partiesNamedBy, withParties } from './event-parties.js';

describe('the parties an archived event concerns', () => {
  it("reads a call's agent and target, a dispatch's executor, a conversation's start and a device event", () => {
    expect(partiesNamedBy({ agent_id: 'agent-7', target: { device_id: 'phone-1' }, tool: 'device.open_app' })).toEqual({
      agent_id: 'agent-7',
      device_id: 'phone-1',
    });
    expect(partiesNamedBy({ agent_id: 'agent-7', target: null })).toEqual({ agent_id: 'agent-7', device_id: null });
    expect(partiesNamedBy({ request_id: 'r', executor: { kind: 'device', device_id: 'phone-2' } })).toEqual({
      agent_id: null,
      device_id: 'phone-2',
    });
    expect(partiesNamedBy({ executor: { kind: 'platform', service: 'model-loop' } })).toEqual(NO_PARTIES);
    expect(partiesNamedBy({ conversation_id: 'c', agent_id: 'a', device_id: 'phone-3' })).toEqual({
      agent_id: 'a',
      device_id: 'phone-3',
    });
  });

  it('names nobody for data that is not an object or whose fields are not identifiers', () => {
    for (const data of [null, 'text', 42, [], { agent_id: 7 }, { agent_id: '' }, { target: 'phone-1' }]) {
      expect(partiesNamedBy(data)).toEqual(NO_PARTIES);
    }
  });

  it('keeps what the aggregate named first and fills in what it lacked', () => {
    const requested = { agent_id: 'agent-7', device_id: null };
    expect(withParties(requested, { agent_id: 'agent-9', device_id: 'phone-1' })).toEqual({
      agent_id: 'agent-7',
      device_id: 'phone-1',
    });
    expect(withParties(NO_PARTIES, requested)).toEqual(requested);
  });
});
