import { Inject, Injectable, Module, type DynamicModule, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { ProjectionRunner } from '@ormuz/event-log';
import { LeaderLease } from '@ormuz/postgres';
import { INFRA, InfrastructureModule, ToolCalls, type Infrastructure } from '@ormuz/service-kit';
import { DeviceCredentialsService } from './commands/device-credentials.service.js';
import { DeviceEventsRecorder } from './commands/device-events.recorder.js';
import { DeviceDispatcher } from './commands/device-dispatcher.js';
import { ExecutionLog } from './commands/execution-log.js';
import { ExecutionProtocol } from './commands/execution-protocol.js';
import { InFlightExecutions } from './commands/in-flight-executions.js';
import { DEVICE_BRIDGE_CONFIG, type DeviceBridgeConfig } from './config.js';
import { CredentialsRepository } from './persistence/credentials.repository.js';
import { ExecutionsRepository } from './persistence/executions.repository.js';
import { executionsProjection } from './projections/executions.projection.js';
import { ExecutionsReactor } from './reactions/executions.reactor.js';
import { DeviceBridgeController } from './transport/device-bridge.controller.js';
import { DeviceLinkHost } from './transport/device-link.host.js';
import { BridgeMetrics } from './metrics.js';

/** Most events the executions projection applies in one transaction. */
const EXECUTIONS_BATCH = 1024;

/**
 * Work that runs on one replica per deployment, the leader (a Postgres advisory lock, {@link LeaderLease}): the
 * executions projection (one checkpoint) and the deadline sweeper. After every committed batch the reactor dispatches
 * the calls it left ready for devices held here, and wakes the other replicas' dispatchers for theirs.
 */
@Injectable()
class BridgeLeadership implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly lease: LeaderLease;
  private runner: ProjectionRunner | undefined;
  private sweeper: NodeJS.Timeout | undefined;

  constructor(
    @Inject(INFRA) private readonly infra: Infrastructure,
    @Inject(DEVICE_BRIDGE_CONFIG) private readonly config: DeviceBridgeConfig,
    private readonly dispatcher: DeviceDispatcher,
    private readonly protocol: ExecutionProtocol,
    private readonly reactor: ExecutionsReactor,
    private readonly link: DeviceLinkHost,
  ) {
    const log = infra.logger;
    this.lease = new LeaderLease({
      url: infra.config.databaseUrl,
      name: `${infra.config.namespace}:device-bridge`,
      onAcquired: () => this.lead(),
      onLost: () => this.follow(),
      onError: (err) => log.warn({ err }, 'device-bridge leader lease: Postgres session problem'),
    });
  }

  private async lead(): Promise<void> {
    this.infra.logger.info({ replica: this.link.routes.replicaId }, 'this replica leads the device-bridge projection and sweeper');
    this.reactor.leading();
    const projection = executionsProjection(this.infra.config.namespace, (batch) => this.reactor.committed(batch));
    // Batches of up to 1,024 events: a transaction costs a few round trips whatever its size, so a busy bridge (five
    // events a call) keeps up by taking more at once, and a quiet one still commits each event as it comes.
    this.runner = new ProjectionRunner(this.infra.js, this.infra.jsm, this.infra.db, projection, {
      logger: this.infra.logger,
      batchSize: EXECUTIONS_BATCH,
    });
    this.infra.consumers.add(this.runner);
    await this.runner.start();
    this.sweeper = setInterval(() => {
      const now = new Date();
      this.dispatcher
        .sealOffline(now)
        .then(() => this.protocol.sweepOverdue(now))
        .catch((err) => this.infra.logger.error({ err }, 'overdue sweep failed'));
    }, this.config.sweepIntervalMs);
  }

  private async follow(): Promise<void> {
    clearInterval(this.sweeper);
    const runner = this.runner;
    this.runner = undefined;
    if (runner) this.infra.consumers.remove(runner);
    await runner?.stop();
  }

  onApplicationBootstrap() {
    return this.lease.start();
  }

  onApplicationShutdown() {
    return this.lease.stop();
  }
}

@Module({})
export class DeviceBridgeModule {
  static with(infra: Infrastructure, config: DeviceBridgeConfig): DynamicModule {
    return {
      module: DeviceBridgeModule,
      imports: [InfrastructureModule.forRoot(infra)],
      controllers: [DeviceBridgeController],
      providers: [
        { provide: DEVICE_BRIDGE_CONFIG, useValue: config },
        { provide: ToolCalls, useFactory: () => new ToolCalls(infra.store, config.namespace, '/ormuz/device-bridge') },
        { provide: BridgeMetrics, useFactory: () => new BridgeMetrics(infra.metrics) },
        ExecutionsRepository,
        CredentialsRepository,
        DeviceEventsRecorder,
        ExecutionLog,
        InFlightExecutions,
        // Bootstrapped in this order: credentials stored before the gateway listens, the lease after.
        DeviceCredentialsService,
        ExecutionProtocol,
        DeviceDispatcher,
        DeviceLinkHost,
        ExecutionsReactor,
        BridgeLeadership,
      ],
    };
  }
}
