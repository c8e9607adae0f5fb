export {
  loadBaseConfig,
  defaultDatabaseUrl,
  intFrom,
  ConfigError,
  type BaseConfig,
  type Env,
  type HealthSettings,
} from './config.js';
export { createLogger, PinoNestLogger } from './logger.js';
export {
  callRpc,
  callService,
  waitUntilServing,
  toErrorBody,
  RemoteError,
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
export { Rpc, checkRequest, type RpcHandler } from './rpc-handler.js';
export {
  AUTHORIZATION_HEADER,
  IDENTITY_HEADER,
  callerOf,
  createAuthenticator,
  type Credential,
  type RpcCallContext,
} from './caller.js';
export { BearerAuthGuard, Caller } from './http-auth.js';
export { submitUnansweredHint } from './submit-hint.js';
export { NatsRpcServer, OrmuzExceptionFilter, httpStatusFor } from './nats-rpc.server.js';
export {
  openInfrastructure,
  InfrastructureModule,
  INFRA,
  type Infrastructure,
  type InfrastructureOptions,
  type SchemaMigrations,
} from './infrastructure.js';
export { ToolCalls, type CallCausation } from './tool-calls.js';
export { startService, runServiceMain, type ServiceOptions, type RunningService } from './run-service.js';
export { LogConsumers, type OperatedConsumer, type RetryParkedReply } from './log-consumers.js';
export { ReadinessCheck, type ReadinessBounds } from './readiness.js';
export { ProbeServer } from './probe-server.js';
