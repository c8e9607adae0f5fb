export * from './client.js';
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
export { JsonText } from './json-text.js';
export {
  StreamedReply,
  streamRpc,
  PART_HEADER,
  PARTS_HEADER,
  type ReplyPart,
  type ReceivedPart,
} from './streamed-reply.js';
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
export {
  LeadingConsumers,
  LeadingConsumersHost,
  type LeadConsumer,
  type LeadingConsumersOptions,
} from './leading-consumers.js';
export { ReadinessCheck, type ReadinessBounds } from './readiness.js';
export { PeriodicTask } from './periodic-task.js';
export { ProbeServer } from './probe-server.js';
export {
  ServiceMetrics,
  METRIC_PREFIX,
  LATENCY_BUCKETS,
  type Counter,
  type Gauge,
  type Histogram,
} from './metrics/service-metrics.js';
export { collectFrom, sharedRead } from './metrics/scrape.js';
