/**
 * What every service opens at start, in order: NATS (with a server check), Postgres (checked to belong to the
 * service's namespace), the streams it writes, its schema's migrations and libs/auth's. Failures name the dependency,
 * the URL and how to start it.
 */
import { ApiKeyStore, AUTH_SCHEMA, authMigrations, type Authenticator } from '@ormuz/auth';
import { createAuthenticator } from './caller.js';
import { Global, Module, type DynamicModule } from '@nestjs/common';
import { jetstream, jetstreamManager, type JetStreamClient, type JetStreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import type { Kysely } from 'kysely';
import type { Migration } from 'kysely/migration';
import type { Logger } from 'pino';
import type { ContextName } from '@ormuz/contracts';
import { checkServer, connectNats, ensureStreams, EventStore } from '@ormuz/event-log';
import { claimNamespace, migrateSchema, openDatabase } from '@ormuz/postgres';
import type { BaseConfig } from './config.js';
import { LogConsumers } from './log-consumers.js';
import { ProjectionRebuilder } from './rebuild/projection-rebuilder.js';
import { createLogger } from './logger.js';
import { registerConsumerMetrics } from './metrics/consumer-metrics.js';
import { ServiceMetrics } from './metrics/service-metrics.js';
import { StartPhases } from './start-phases.js';

/** Handles shared by a service's providers. */
export interface Infrastructure {
  readonly service: string;
  readonly config: BaseConfig;
  readonly logger: Logger;
  readonly nc: NatsConnection;
  readonly js: JetStreamClient;
  readonly jsm: JetStreamManager;
  readonly store: EventStore;
  readonly db: Kysely<any>;
  /** The projections and reactors this process runs, answering `consumers.status` and `consumers.retry`. */
  readonly consumers: LogConsumers;
  /** Verifies the credentials callers present, on NATS commands and HTTP routes alike. */
  readonly authenticator: Authenticator;
  /** This process's Prometheus registry (`GET /metrics` on the probes' port), with its consumers' gauges. */
  readonly metrics: ServiceMetrics;
  /** URLs this process serves (`http`, `devices`, ...), filled in as listeners start; reported by `health`. */
  readonly endpoints: Record<string, string>;
  close(): Promise<void>;
}

export interface InfrastructureOptions {
  readonly service: string;
  readonly config: BaseConfig;
  /** Streams this service writes; created if missing. */
  readonly streams: readonly ContextName[];
  /** This service's Postgres schema and its migrations. */
  readonly schema: string;
  readonly migrations: Record<string, Migration>;
  readonly logger?: Logger;
}

/** A Postgres schema and the migrations that build it. */
export interface SchemaMigrations {
  readonly schema: string;
  readonly migrations: Record<string, Migration>;
}

/**
 * The schemas a service migrates at start, in order: its own, then libs/auth's `auth` (API keys), which every service
 * reads to verify a key. Services of a namespace start in any order and at once: migrations of one schema are
 * serialised across processes by the migrator's Postgres advisory lock, and each schema keeps its own migration table.
 */
export function migratedSchemas(
  opts: Pick<InfrastructureOptions, 'schema' | 'migrations'>,
): readonly SchemaMigrations[] {
  return [
    { schema: opts.schema, migrations: opts.migrations },
    { schema: AUTH_SCHEMA, migrations: authMigrations },
  ];
}

/** Opens NATS and Postgres, declares streams, runs migrations. */
export async function openInfrastructure(opts: InfrastructureOptions): Promise<Infrastructure> {
  const logger = opts.logger ?? createLogger(opts.service, opts.config.logLevel);
  const phases = new StartPhases(logger);
  // Under the shipped NATS authorization each service connects as its own user (NATS_USER / NATS_PASSWORD), whose
  // permissions allow exactly what the service does (infra/nats/authorization.conf).
  const nc = await phases.run('NATS: connect', () =>
    connectNats({
      url: opts.config.natsUrl,
      name: `ormuz-${opts.service}`,
      user: opts.config.natsUser,
      password: opts.config.natsPassword,
    }),
  );
  const check = await phases.run('NATS: server check', () => checkServer(nc, opts.config.natsMonitorUrl));
  for (const warning of check.warnings) logger.warn({ nats: check.version }, warning);
  void (async () => {
    for await (const s of nc.status()) {
      if (s.type === 'disconnect' || s.type === 'reconnect') logger.warn({ nats: s.type }, `NATS ${s.type}`);
      // A grant missing from the NATS authorization shows here, not as a failure of the code that published.
      if (s.type === 'error' && s.error.name === 'PermissionViolationError') {
        logger.error(
          { nats: 'permissions_violation', user: opts.config.natsUser, err: s.error.message },
          `NATS refused ${opts.config.natsUser ?? 'this connection'} a publish or subscription (see infra/nats/authorization.conf)`,
        );
      }
    }
  })();
  // JetStream's API answers within milliseconds when idle, but a server busy redelivering to consumers (a restart right
  // after a kill -9, on a loaded machine) can take seconds over the stream and consumer declarations of a start: the
  // client's 5 s default made such a start fail with a bare `timeout`. The event store's publishes keep their own
  // bound (EventStore `timeoutMs`).
  const js = jetstream(nc, { timeout: 15_000 });
  const jsm = await phases.run('JetStream: account info', () => jetstreamManager(nc, { timeout: 15_000 }));
  let db: Kysely<any>;
  try {
    db = await phases.run('Postgres: open the pool', () =>
      openDatabase({
        url: opts.config.databaseUrl,
        createIfMissing: opts.config.createDatabase,
        onIdleError: (err) =>
          logger.warn({ err: err.message }, 'an idle database connection failed; the pool opens another'),
      }),
    );
  } catch (err) {
    await nc.close();
    throw err;
  }
  try {
    // Before any migration: a database of another namespace is refused untouched.
    const claim = await phases.run("Postgres: the namespace claim's lock", () =>
      claimNamespace(db, opts.config.namespace),
    );
    if (claim.claimed) logger.info({ namespace: claim.namespace }, 'database claimed for this namespace');
  } catch (err) {
    await nc.close();
    await db.destroy();
    throw err;
  }
  // Streams only once the database is known to be this namespace's: a refused start leaves nothing behind.
  await phases.run('JetStream: stream declarations', () =>
    ensureStreams(jsm, opts.config.namespace, opts.streams, { replicas: opts.config.streamReplicas }),
  );
  for (const { schema, migrations } of migratedSchemas(opts)) {
    const applied = await phases.run(`Postgres: migrations of ${schema}`, () => migrateSchema(db, schema, migrations));
    if (applied.length > 0) logger.info({ applied, schema }, 'migrations applied');
  }
  const store = new EventStore(js, jsm);
  // Every service verifies API keys, so every service migrates the `auth` schema above: a key presented to a service
  // that starts before any other is then unknown (401), not a missing table (500).
  const authenticator = createAuthenticator(opts.config, new ApiKeyStore(db));
  const consumers = new LogConsumers(new ProjectionRebuilder(db, migratedSchemas(opts), logger));
  consumers.serve(nc, opts.config.namespace, opts.service, logger, authenticator);
  const metrics = new ServiceMetrics(opts.service);
  registerConsumerMetrics(metrics, consumers, jsm, logger);
  return {
    service: opts.service,
    config: opts.config,
    logger,
    nc,
    js,
    jsm,
    store,
    db,
    consumers,
    authenticator,
    metrics,
    endpoints: {},
    async close() {
      consumers.close();
      // A connection that cannot drain (NATS is down and it is reconnecting) is closed instead: left open, it would try
      // to reconnect for ever and keep the process alive.
      await nc.drain().catch(() => nc.close());
      await db.destroy();
    },
  };
}

/** Injection token for {@link Infrastructure}. */
export const INFRA = Symbol('ormuz.infrastructure');

/** Makes the opened infrastructure injectable as `@Inject(INFRA)`. */
@Global()
@Module({})
export class InfrastructureModule {
  static forRoot(infra: Infrastructure): DynamicModule {
    return { module: InfrastructureModule, providers: [{ provide: INFRA, useValue: infra }], exports: [INFRA] };
  }
}
