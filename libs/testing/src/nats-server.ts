/**
 * Tests start NATS servers of their own (the shared test server runs without authorization) with the launcher the demo
 * uses; it lives in `@ormuz/event-log`, a runtime library, and is re-exported here so tests import it with the rest of
 * their helpers.
 */
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
} from '@ormuz/event-log';
