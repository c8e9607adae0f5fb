import 'reflect-metadata';
import { PATTERN_METADATA } from '@nestjs/microservices/constants.js';
import { SchemaViolationError, type RpcReplyOf, type RpcRequestOf } from '@ormuz/contracts';
import type { Identity } from '@ormuz/auth';
import type { RpcCallContext } from './caller.js';
import { Rpc } from './rpc-handler.js';

const analyst: Identity = { kind: 'person', subject: 'ann@acme', tenant: 'acme', roles: ['analyst'], issuer: 'test' };
const asAnalyst: RpcCallContext = { identity: analyst };
/** Calls the decorated method as Nest does: the body, then the transport's context. */
const asCalled = (handlers: Handlers, body: unknown, context?: RpcCallContext): unknown =>
  Reflect.apply(handlers.riskApps, handlers, [body, context]);

class Handlers {
  readonly seen: unknown[] = [];

  @Rpc('policy.risk.apps.get')
  riskApps(request: RpcRequestOf<'policy.risk.apps.get'>, caller: Identity): RpcReplyOf<'policy.risk.apps.get'> {
    this.seen.push(request, caller.subject);
    return { tenant: request.tenant, finance: [], not_finance: [] };
  }
}

describe('@Rpc', () => {
  it('serves the command under its name within the service', () => {
    expect(Reflect.getMetadata(PATTERN_METADATA, Handlers.prototype.riskApps)).toEqual(['risk.apps.get']);
  });

  it('hands the method a request that passed the declared schema and its caller, with the handler as `this`', () => {
    const handlers = new Handlers();
    expect(asCalled(handlers, { tenant: 'acme' }, asAnalyst)).toEqual({
      tenant: 'acme',
      finance: [],
      not_finance: [],
    });
    expect(handlers.seen).toEqual([{ tenant: 'acme' }, 'ann@acme']);
  });

  it('refuses a caller the access table does not allow before looking at the request', () => {
    const handlers = new Handlers();
    const call = (body: unknown, context?: RpcCallContext) => () => asCalled(handlers, body, context);
    expect(call({ tenant: 'acme' })).toThrow(expect.objectContaining({ code: 'unauthenticated' }));
    expect(call({ tenant: 'a.b' })).toThrow(expect.objectContaining({ code: 'unauthenticated' }));
    expect(call({ tenant: 'globex' }, asAnalyst)).toThrow(/acts for tenant acme; this request names tenant globex/);
    expect(handlers.seen).toEqual([]);
  });

  it('refuses a request the schema refuses before the method runs, naming the schema and the problem', () => {
    const handlers = new Handlers();
    const call = (body: unknown) => () => asCalled(handlers, body, asAnalyst);
    expect(call({ tenant: 42 })).toThrow(SchemaViolationError);
    expect(call({ tenant: 'acme', extra: 1 })).toThrow(
      /^policy\.tenant\.v1 is invalid: the value has an unexpected property 'extra'\.$/,
    );
    expect(call(undefined)).toThrow(/the value must be object/);
    expect(handlers.seen).toEqual([]);
  });

  it('refuses a name that is not a command', () => {
    expect(() => Rpc('policy.nope' as 'policy.status')).toThrow(/policy\.nope is not a command of any service/);
  });
});
