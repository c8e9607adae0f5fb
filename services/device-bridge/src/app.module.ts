import { Inject, Injectable, Module, type DynamicModule, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { ProjectionRunner } from '@ormuz/event-log';
import { LeaderLease } from '@ormuz/postgres';
import { INFRA, InfrastructureModule, ToolCalls, type Infrastructure } from '@ormuz/service-kit';
import { DeviceCredentialsService } from './commands/device-credentials.service.js';
import { DeviceEventsRecorder } from './commands/device-events.recorder.js';
import { DeviceExecutionsService } from './commands/device-executions.service.js';
import { DEVICE_BRIDGE_CONFIG, type DeviceBridgeConfig } from './config.js';
import { CredentialsRepository } from './persistence/credentials.repository.js';
import { ExecutionsRepository } from './persistence/executions.repository.js';
import { executionsProjection } from './projections/executions.projection.js';
import { DeviceBridgeController } from './transport/device-bridge.controller.js';
import { DeviceLinkHost } from './transport/device-link.host.js';

/**
 * Work that runs on one replica per deployment, the leader (a Postgres advisory lock, {@link LeaderLease}): the
 * executions projection (one checkpoint) and the deadline sweeper. Every committed batch wakes the dispatchers of all
 * replicas, each dispatching for the devices it holds.
 */
@Injectable()
class BridgeLeadership implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly lease: LeaderLease;
  private runner: ProjectionRunner | undefined;
  private sweeper: NodeJS.Timeout | undefined;

  constructor(
    @Inject(INFRA) private readonly infra: Infrastructure,
    @Inject(DEVICE_BRIDGE_CONFIG) private readonly config: DeviceBridgeConfig,
    private readonly executions: DeviceExecutionsService,
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
    this.runner = new ProjectionRunner(this.infra.js, this.infra.jsm, this.infra.db, executionsProjection(this.infra.config.namespace, (sealed) => {
      for (const s of sealed) this.link.sendSeal({ tenant: s.tenant, deviceId: s.device_id }, s.request_id);
    }), {
      logger: this.infra.logger,
      onCommitted: () => {
        this.executions.kick();
        this.link.routes.announceReady();
      },
    });
    this.infra.consumers.add(this.runner);
    await this.runner.start();
    this.sweeper = setInterval(() => {
      this.executions.sweepOverdue().catch((err) => this.infra.logger.error({ err }, 'overdue sweep failed'));
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
        ExecutionsRepository,
        CredentialsRepository,
        DeviceEventsRecorder,
        // Bootstrapped in this order: credentials stored before the gateway listens, the lease after.
        DeviceCredentialsService,
        DeviceExecutionsService,
        DeviceLinkHost,
        BridgeLeadership,
      ],
    };
  }
}
