import { RPCS, SERVICE_RPCS, SERVICES, type RpcName } from '@ormuz/contracts';
import { ACCESS, accessOf, authorize, decidesFor, SERVICE_ACCESS } from './access.js';
import { serviceIdentity, type AgentIdentity, type PersonIdentity, type Role } from './identity.js';

const person = (tenant: string, ...roles: Role[]): PersonIdentity => ({
  kind: 'person',
  subject: `${roles.join('+') || 'nobody'}@${tenant}`,
  tenant,
  roles,
  issuer: 'test',
});
const agent: AgentIdentity = { kind: 'agent', subject: 'agent:a1', tenant: 'acme', agent_id: 'a1', key_id: 'k1' };

describe('the access table', () => {
  it('has a row for every command of every service', () => {
    expect(Object.keys(ACCESS).sort()).toEqual(Object.keys(RPCS).sort());
    expect(Object.keys(SERVICE_ACCESS).sort()).toEqual(Object.keys(SERVICE_RPCS).sort());
    for (const service of SERVICES) expect(accessOf(`${service}.health`)).toEqual({ roles: [], anyone: true });
  });
});

describe('authorize', () => {
  const run = (name: RpcName, who: Parameters<typeof authorize>[1], body: object) => () => authorize(name, who, body);

  it('asks for a credential when there is none, except for health', () => {
    expect(run('approvals.approve', undefined, { tenant: 'acme' })).toThrow(expect.objectContaining({ code: 'unauthenticated' }));
    expect(run('policy.health', undefined, {})).not.toThrow();
  });

  it("refuses a request naming another tenant than the credential's, on every command", () => {
    const admin = person('acme', 'admin');
    for (const name of Object.keys(RPCS) as RpcName[]) {
      if (ACCESS[name as keyof typeof ACCESS].platform) continue;
      expect(run(name, admin, { tenant: 'globex' })).toThrow(expect.objectContaining({ code: 'forbidden' }));
      expect(run(name, admin, { tenant: 'acme' })).not.toThrow();
    }
  });

  it('holds people to their roles', () => {
    expect(run('approvals.approve', person('acme', 'analyst'), { tenant: 'acme' })).toThrow(/needs the role admin or owner/);
    expect(run('approvals.approve', person('acme', 'owner'), { tenant: 'acme' })).not.toThrow();
    expect(run('policy.seal', person('acme', 'owner'), { tenant: 'acme' })).toThrow(/operator/);
    expect(run('policy.seal', person('acme', 'operator'), { tenant: 'acme' })).not.toThrow();
    expect(run('audit.events', person('acme', 'analyst'), { tenant: 'acme' })).not.toThrow();
    expect(run('policy.grants.set', person('acme', 'analyst'), { tenant: 'acme' })).toThrow(expect.objectContaining({ code: 'forbidden' }));
  });

  it('lets agents act only for themselves, and never decide approvals', () => {
    expect(run('policy.submit', agent, { tenant: 'acme', agent_id: 'a1' })).not.toThrow();
    expect(run('policy.submit', agent, { tenant: 'acme', agent_id: 'a2' })).toThrow(/acts for agent a1, not a2/);
    expect(run('approvals.approve', agent, { tenant: 'acme' })).toThrow(/not for agents/);
    expect(run('policy.grants.set', agent, { tenant: 'acme', agent_id: 'a1' })).toThrow(/not for agents/);
  });

  it('lets a service run only the commands it is listed for', () => {
    expect(run('policy.submit', serviceIdentity('model-loop', 'acme', 'a1'), { tenant: 'acme' })).not.toThrow();
    expect(run('policy.seal', serviceIdentity('model-loop', 'acme'), { tenant: 'acme' })).toThrow(/not one service model-loop runs/);
    expect(run('policy.submit', serviceIdentity('approvals', 'acme'), { tenant: 'acme' })).toThrow(expect.objectContaining({ code: 'forbidden' }));
  });

  it('keeps platform commands for an admin of every tenant', () => {
    expect(run('audit.rebuild', person('acme', 'admin'), {})).toThrow(/platform administrator/);
    expect(run('audit.rebuild', person('*', 'admin'), {})).not.toThrow();
    expect(run('policy.consumers.retry', person('*', 'operator'), {})).toThrow(/platform administrator/);
  });
});

describe('decidesFor', () => {
  it('is owners (for their agents, when named) and admins', () => {
    expect(decidesFor(person('acme', 'owner'), 'a1')).toBe(true);
    expect(decidesFor({ ...person('acme', 'owner'), agents: ['a2'] }, 'a1')).toBe(false);
    expect(decidesFor(person('acme', 'admin'), 'a1')).toBe(true);
    expect(decidesFor(person('acme', 'operator'), 'a1')).toBe(false);
    expect(decidesFor(agent, 'a1')).toBe(false);
  });
});
