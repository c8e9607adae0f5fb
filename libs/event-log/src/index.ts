export * from './errors.js';
export { connectNats, type NatsConnectOptions } from './connection.js';
export { ensureStreams, streamConfig, streamName, MAX_EVENT_BYTES } from './topology.js';
export { checkServer, compareVersions, MIN_PRODUCTION_NATS, type ServerCheck } from './server-check.js';
export type { Decider } from './decider.js';
export {
  EventStore,
  decodeEvent,
  SNAPSHOT_HEADER,
  SNAPSHOT_VERSION_HEADER,
  type AppendResult,
  type EventStoreOptions,
  type Loaded,
} from './event-store.js';
export { runCommand, type CommandContext, type CommandResult, type RunCommandOptions } from './command-runner.js';
export {
  ProjectionRunner,
  projectionBookkeepingMigration,
  type Projection,
  type ProjectionLogger,
  type ProjectionRunnerOptions,
} from './projection-runner.js';
export { replay, type ReplayItem, type ReplayOptions } from './replay.js';
