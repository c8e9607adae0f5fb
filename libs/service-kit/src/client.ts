/**
 * What a caller of the services needs and nothing that serves: configuration, the typed RPC client and its errors.
 * A separate entry (`@ormuz/service-kit/client`) so that a short-lived process (the CLI) loads no NestJS.
 */
export {
  loadBaseConfig,
  defaultDatabaseUrl,
  intFrom,
  ConfigError,
  type BaseConfig,
  type Env,
  type HealthSettings,
} from './config.js';
export {
  callRpc,
  callService,
  waitUntilServing,
  toErrorBody,
  RemoteError,
  isTransientRemoteError,
  ServiceUnavailableError,
  MAX_RPC_BYTES,
  type CallRpcOptions,
  type CallServiceOptions,
  type NoAnswerCause,
  type RpcErrorBody,
  type RpcReply,
  type ServiceHealth,
  type UnansweredHint,
} from './rpc.js';
export { submitUnansweredHint } from './submit-hint.js';
export { streamRpc, PART_HEADER, PARTS_HEADER, type ReceivedPart, type StreamRpcOptions } from './streamed-reply.js';
