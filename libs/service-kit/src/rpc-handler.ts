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
  // Only `value` is named: the compiler then holds the method to the handler type (a whole descriptor would be
  // invariant in it).
  return (target: object, key: string | symbol, descriptor: { value?: RpcHandler<N> }): void => {
    const handle = descriptor.value;
    if (!handle) throw new Error(`@Rpc('${name}') must decorate a method`);
    descriptor.value = function (this: unknown, body: unknown) {
      return handle.call(this, assertValid<RpcRequestOf<N>>(requestSchema, body));
    };
    MessagePattern(found.command)(target, key, descriptor as PropertyDescriptor);
  };
}
