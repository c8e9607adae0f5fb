/**
 * The server side of the contracts' command map: `@Rpc('policy.status')` on a controller method serves the command
 * (`@MessagePattern('status')` for {@link NatsRpcServer}), checks the request against its declared schema before the
 * method runs, and makes the compiler hold the method to the declared request and reply types.
 */
import { Ctx, MessagePattern, Payload } from '@nestjs/microservices';
import { authorize, type Identity } from '@ormuz/auth';
import { assertValid, rpcContract, type RpcName, type RpcReplyOf, type RpcRequestOf } from '@ormuz/contracts';
import type { RpcCallContext } from './caller.js';

/**
 * A method that handles command `N`: the checked request and the caller's verified identity in, the reply's data (or
 * a promise of it) out. The identity is undefined only for commands anyone may run.
 */
export type RpcHandler<N extends RpcName> = (
  request: RpcRequestOf<N>,
  caller: Identity,
) => RpcReplyOf<N> | Promise<RpcReplyOf<N>>;

/**
 * Serves command `name` with the decorated method. A caller the access table does not allow is refused
 * (`unauthenticated` or `forbidden`), and a request that fails the command's schema with `schema_violation`
 * (SchemaViolationError, naming the schema and what is wrong); neither reaches the method.
 */
export function Rpc<N extends RpcName>(name: N) {
  const found = rpcContract(name);
  if (!found) throw new Error(`${name} is not a command of any service`);
  // Generic in the method's own type `M`, checked against the handler type: the compiler holds the method to the
  // declared request and reply, without inferring `N` back from the method (which costs it seconds).
  return <M extends RpcHandler<N>>(
    target: object,
    key: string | symbol,
    descriptor: TypedPropertyDescriptor<M>,
  ): void => {
    const handle = descriptor.value;
    if (!handle) throw new Error(`@Rpc('${name}') must decorate a method`);
    // Reflect.apply rather than handle.call, whose types the compiler would infer from the generic method again.
    const checked = function (this: unknown, body: unknown, context: RpcCallContext | undefined): unknown {
      return Reflect.apply(handle, this, [checkRequest(name, context?.identity, body), context?.identity]);
    };
    descriptor.value = checked as unknown as M;
    MessagePattern(found.command)(target, key, descriptor);
    // Nest hands a pattern handler only what its parameters ask for: the body, and the transport's context, which
    // NatsRpcServer makes the caller's verified identity.
    Payload()(target, key, 0);
    Ctx()(target, key, 1);
  };
}

/**
 * What every transport does before a handler runs: check that `caller` may run command `name` with `body` (access
 * table, tenant), then that `body` is the command's request. Who first: a caller without the right to run the command
 * learns nothing about its request's shape. Throws UnauthenticatedError, ForbiddenError or SchemaViolationError.
 */
export function checkRequest<N extends RpcName>(name: N, caller: Identity | undefined, body: unknown): RpcRequestOf<N> {
  const found = rpcContract(name);
  if (!found) throw new Error(`${name} is not a command of any service`);
  authorize(name, caller, body);
  return assertValid<RpcRequestOf<N>>(found.contract.requestSchema, body);
}
