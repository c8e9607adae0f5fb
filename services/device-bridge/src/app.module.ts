import { Inject, Injectable, Module, type DynamicModule, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { ProjectionRunner } from '@ormuz/event-log';
import { INFRA, InfrastructureModule, ToolCalls, type Infrastructure } from '@ormuz/service-kit';
import { DeviceExecutionsService } from './commands/device-executions.service.js';
import { DEVICE_BRIDGE_CONFIG, type DeviceBridgeConfig } from './config.js';
import { ExecutionsRepository } from './persistence/executions.repository.js';
import { executionsProjection } from './projections/executions.projection.js';
import { DeviceBridgeController } from './transport/device-bridge.controller.js';
import { DeviceLinkHost } from './transport/device-link.host.js';

/** Keeps the executions table current; every committed batch wakes the dispatcher. */
@Injectable()
class ExecutionsProjectionRunner implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly runner: ProjectionRunner;
  constructor(@Inject(INFRA) infra: Infrastructure, executions: DeviceExecutionsService) {
    this.runner = new ProjectionRunner(infra.js, infra.jsm, infra.db, executionsProjection(infra.config.namespace), {
      logger: infra.logger,
      onCommitted: () => executions.kick(),
    });
  }
  onApplicationBootstrap() {
    return this.runner.start();
  }
  onApplicationShutdown() {
    return this.runner.stop();
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
        DeviceExecutionsService,
        DeviceLinkHost,
        ExecutionsProjectionRunner,
      ],
    };
  }
}
