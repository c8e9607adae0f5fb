export { DEFAULT_DATABASE_URL, DEFAULT_NATS_URL, testEnv, type TestEnv } from './env.js';
export { randomNamespace } from './namespace.js';
export { waitFor, WaitTimeoutError, type WaitForOptions } from './wait-for.js';
export { freePort } from './free-port.js';
export {
  DEBIAN_NATS_SERVER,
  findNatsServer,
  natsServerBinary,
  startNatsCluster,
  startNatsServer,
  type NatsClusterHandle,
  type NatsClusterNode,
  type NatsClusterOptions,
  type NatsServerHandle,
  type NatsServerOptions,
} from './nats-server.js';
export { createTestDatabase, openTestDatabase, type OpenTestDatabase, type TestDatabase } from './database.js';
export { submitFrame } from './device-frames.js';
export { liveTextFrame } from './live-text-frames.js';
export { scratchFiles, type ScratchFiles } from './scratch-files.js';
export {
  deciderSpec,
  type DeciderSpec,
  type ErrorClass,
  type Given,
  type SpecDecider,
  type When,
} from './decider-spec.js';
export { adminFor, bearerFor, testToken } from './credentials.js';
export {
  authorizeSeededCall,
  seededSubmit,
  submitSeededCall,
  type CallAppender,
  type SeedCommand,
  type SeededCall,
  type SeedResult,
} from './calls.js';
export { callLifecycles, type LifecycleLog, type LifecyclePath, type LifecyclePlan } from './lifecycles.js';
export {
  AnthropicServer,
  ApiRejection,
  ModelServer,
  OpenAiChatServer,
  OpenAiResponsesServer,
  type AzureDeployment,
  type ModelServerStep,
  type ReceivedRequest,
  type ScriptedStop,
  type ScriptedToolCall,
} from './model-servers/index.js';
export {
  BelowMinimumError,
  counter,
  countersTableMigration,
  countIncrement,
  INCREMENTED,
  isIncremented,
  LimitReachedError,
  NOTED,
  resetCounters,
  type CounterCommand,
  type CountersDB,
  type CounterState,
  type Incremented,
} from './counter.js';
export { chromiumPath, launchBrowser } from './browser.js';
export { EVENTS_PER_SEEDED_CALL, historyCallEvents, seedCallHistory, type CallHistory } from './call-history.js';
export {
  natsPasswordVariable,
  SHIPPED_NATS_AUTHORIZATION,
  startAuthorizedNatsServer,
  type AuthorizedNatsServer,
} from './nats-authorization.js';
export { parseExposition, scrapeMetrics, type MetricSample, type Scrape } from './scrape.js';
