import { SchemaViolationError } from './errors.js';
import { assertValid, hasSchema } from './schema-registry.js';
import { assertValidReply, rpcContract, RPCS, SERVICE_RPCS, SERVICES, type RpcName } from './rpcs.js';

describe('the command map', () => {
  it('names each command <service>.<name>, of a known service, with a registered request schema', () => {
    for (const [name, contract] of Object.entries(RPCS)) {
      const service = name.slice(0, name.indexOf('.'));
      expect(SERVICES).toContain(service);
      expect(hasSchema(contract.requestSchema)).toBe(true);
      expect(rpcContract(name)).toEqual({ service, command: name.slice(service.length + 1), contract });
    }
    for (const contract of Object.values(SERVICE_RPCS)) expect(hasSchema(contract.requestSchema)).toBe(true);
  });

  it('finds the commands every service answers under each service, and nothing else', () => {
    expect(rpcContract('device-bridge.consumers.retry')).toEqual({
      service: 'device-bridge',
      command: 'consumers.retry',
      contract: SERVICE_RPCS['consumers.retry'],
    });
    expect(rpcContract('policy.risk.apps.get')?.command).toBe('risk.apps.get');
    for (const name of ['policy', 'policy.nope', 'weather.health', '.health', 'policy.constructor', 'policy.toString'])
      expect(rpcContract(name)).toBeUndefined();
  });

  it('checks requests with the schema the server uses', () => {
    const submit = rpcContract('policy.submit')!.contract;
    expect(() => assertValid(submit.requestSchema, { tenant: 'acme' })).toThrow(/missing 'agent_id'/);
  });

  it('compiles every reply schema, and holds a reply to it', () => {
    for (const name of Object.keys(RPCS) as RpcName[])
      expect(() => assertValidReply(name, null)).toThrow(SchemaViolationError);
    const status = {
      status: {
        status: 'succeeded',
        call_id: 'call_1',
        tool: 'device.tap',
        payload_sha256: 'a'.repeat(64),
        outcome: { kind: 'succeeded', result: { ok: true } },
        unknown_cause: null,
        pending_approval: null,
        sealed_by: null,
        next_step: 'Done.',
      },
      version: 7,
    };
    expect(assertValidReply('policy.status', status)).toBe(status);
    expect(() => assertValidReply('policy.status', { ...status, version: '7' })).toThrow(/version must be integer/);
    expect(() => assertValidReply('policy.status', { ...status, extra: 1 })).toThrow(/unexpected property 'extra'/);
    expect(
      assertValidReply('audit.health', { service: 'audit', pid: 1, endpoints: { http: 'http://x' } }),
    ).toBeDefined();
  });
});
