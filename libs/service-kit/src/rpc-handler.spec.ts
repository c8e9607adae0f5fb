import 'reflect-metadata';
import { PATTERN_METADATA } from '@nestjs/microservices/constants.js';
import { SchemaViolationError, type RpcReplyOf, type RpcRequestOf } from '@ormuz/contracts';
import { Rpc } from './rpc-handler.js';

class Handlers {
  readonly seen: unknown[] = [];

  @Rpc('policy.risk.apps.get')
  riskApps(request: RpcRequestOf<'policy.risk.apps.get'>): RpcReplyOf<'policy.risk.apps.get'> {
    this.seen.push(request);
    return { tenant: request.tenant, finance: [], not_finance: [] };
  }
}

describe('@Rpc', () => {
  it('serves the command under its name within the service', () => {
    expect(Reflect.getMetadata(PATTERN_METADATA, Handlers.prototype.riskApps)).toEqual(['risk.apps.get']);
  });

  it('hands the method a request that passed the declared schema, with the handler as `this`', () => {
    const handlers = new Handlers();
    expect(handlers.riskApps({ tenant: 'acme' })).toEqual({ tenant: 'acme', finance: [], not_finance: [] });
    expect(handlers.seen).toEqual([{ tenant: 'acme' }]);
  });

  it('refuses a request the schema refuses before the method runs, naming the schema and the problem', () => {
    const handlers = new Handlers();
    const call = (body: unknown) => () => (handlers.riskApps as (body: unknown) => unknown)(body);
    expect(call({ tenant: 'a.b' })).toThrow(SchemaViolationError);
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
