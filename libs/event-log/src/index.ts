export * from './errors.js';
export { connectNats, inboxPrefixOf, type NatsConnectOptions } from './connection.js';
export { ensureStreams, streamConfig, streamName, MAX_EVENT_BYTES, type StreamOptions } from './topology.js';
export {
  checkServer,
  compareVersions,
  hasExpectedSequenceRace,
  EXPECTED_SEQUENCE_RACE_FIXED,
  MIN_PRODUCTION_NATS,
  versionWarnings,
  type ServerCheck,
} from './server-check.js';
export type { Decider } from './decider.js';
export { expectEvent, type Enveloped, type EventGuard, type ReadsEvents } from './event-types.js';
export {
  EventStore,
  decodeEvent,
  decodeEvents,
  CLOUDEVENTS_BATCH,
  CONTENT_TYPE_HEADER,
  SNAPSHOT_HEADER,
  SNAPSHOT_VERSION_HEADER,
  type AppendResult,
  type EventStoreOptions,
  type Loaded,
  type StoredEvent,
} from './event-store.js';
export { runCommand, type CommandContext, type CommandResult, type RunCommandOptions } from './command-runner.js';
export {
  AggregateRepository,
  asOfPoint,
  recordedBy,
  type AsOf,
  type AggregateRecord,
  type AggregateType,
  type Causation,
} from './aggregate-repository.js';
export {
  Bookkeeping,
  CheckpointMovedError,
  projectionBookkeepingMigration,
  type ParkedMessage,
} from './consumption/bookkeeping.js';
export {
  LogConsumer,
  type ConsumerLogger,
  type ConsumerStatus,
  type CrashPoint,
  type LogConsumerOptions,
  type LogSink,
  type LogSource,
} from './consumption/log-consumer.js';
export {
  ProjectionRunner,
  type AfterCommit,
  type AppliedEvent,
  type Projection,
  type ProjectionRunnerOptions,
  type ReadModelTable,
} from './consumption/projection-runner.js';
export { SchemaOutsideRebuildError, SchemaRedirect } from './consumption/schema-redirect.js';
export {
  ReactionRunner,
  type Delivery,
  type Reaction,
  type ReactionRunnerOptions,
} from './consumption/reaction-runner.js';
export { replay, type ReplayItem, type ReplayOptions } from './replay.js';
export {
  DEBIAN_NATS_SERVER,
  clusterNatsServer,
  fetchedNatsServer,
  findNatsServer,
  natsServerBinary,
  NatsStoreInUseError,
  startNatsServer,
  type NatsServerHandle,
  type NatsServerOptions,
} from './nats-server.js';
export {
  startNatsCluster,
  type NatsClusterHandle,
  type NatsClusterNode,
  type NatsClusterOptions,
} from './nats-cluster.js';
export {
  checkStreamSequences,
  describeAnomaly,
  findSequenceAnomalies,
  readLoggedMessages,
  type LoggedMessage,
  type SequenceAnomaly,
} from './sequence-check.js';
