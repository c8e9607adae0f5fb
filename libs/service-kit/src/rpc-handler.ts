/**
 * The server side of the contracts' command map: `@Rpc('policy.status')` on a controller method serves the command
 * (`@MessagePattern('status')` for {@link NatsRpcServer}), checks the request against its declared schema before the
 * method runs, and makes the compiler hold the method to the declared request and reply types.
 */
import { MessagePattern } from '@nestjs/microservices';
import { assertValid, rpcContract, type RpcName, type RpcReplyOf, type RpcRequestOf } from '@ormuz/contracts';

/** A method that handles command `N`: the checked request in, the reply's data (or a promise of it) out. */
export type RpcHandler<N extends RpcName> = (request: RpcRequestOf<N>) => RpcReplyOf<N> | Promise<RpcReplyOf<N>>;

/**
 * Serves command `name` with the decorated method. A request that fails the command's schema is refused with
 * `schema_violation` (SchemaViolationError, naming the schema and what is wrong) and never reaches the method.
 */
export function Rpc<N extends RpcName>(name: N) {
  const found = rpcContract(name);
  if (!found) throw new Error(`${name} is not a command of any service`);
  const { requestSchema } = found.contract;
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
    const checked = function (this: unknown, body: unknown): unknown {
      return Reflect.apply(handle, this, [assertValid(requestSchema, body)]);
    };
    descriptor.value = checked as M;
    MessagePattern(found.command)(target, key, descriptor);
  };
}
