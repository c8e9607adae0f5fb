/**
 * Hosts the WebSocket gateway inside the Nest app: authenticates devices with their credentials and routes every
 * protocol step to DeviceExecutionsService, which records it on the log.
 */
import { Inject, Injectable, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import type { SubmitFrameV1 } from '@ormuz/contracts';
import { INFRA, type Infrastructure } from '@ormuz/service-kit';
import { DeviceExecutionsService, type DeviceLink } from '../commands/device-executions.service.js';
import { DEVICE_BRIDGE_CONFIG, type DeviceBridgeConfig } from '../config.js';
import { DeviceCredentials, type DeviceIdentity } from '../domain/device-credentials.js';
import { DeviceGateway } from './device-gateway.js';

@Injectable()
export class DeviceLinkHost implements DeviceLink, OnApplicationBootstrap, OnApplicationShutdown {
  readonly gateway: DeviceGateway;
  private sweeper: NodeJS.Timeout | undefined;

  constructor(
    private readonly executions: DeviceExecutionsService,
    @Inject(DEVICE_BRIDGE_CONFIG) private readonly config: DeviceBridgeConfig,
    @Inject(INFRA) private readonly infra: Infrastructure,
  ) {
    const credentials = new DeviceCredentials(config.devices);
    const log = infra.logger.child({ component: 'device-gateway' });
    this.gateway = new DeviceGateway({
      host: config.host,
      port: config.port,
      heartbeatIntervalMs: config.heartbeatMs,
      authenticator: { authenticate: async (hello) => credentials.verify(hello.tenant, hello.device_id, hello.token) },
      handler: {
        onConnected: (device) => this.executions.onConnected(device, device.bootId),
        onStartClaim: (device, frame) => this.executions.onStartClaim(device, frame, device.bootId),
        onOutcome: (device, frame) => this.executions.onOutcome(device, frame),
        onStatusReport: (device, frame) => this.executions.onStatusReport(device, frame),
        onDisconnected: (device, cause) => this.executions.onDisconnected(device, cause.kind),
      },
      logger: {
        debug: (m, f) => log.debug(f ?? {}, m),
        warn: (m, f) => log.warn(f ?? {}, m),
        error: (m, f) => log.error(f ?? {}, m),
      },
    });
    executions.attach(this);
  }

  async onApplicationBootstrap() {
    const address = await this.gateway.listen();
    this.infra.endpoints.devices = this.gateway.url();
    this.infra.logger.info({ port: address.port, host: this.config.host }, 'device gateway listening');
    this.sweeper = setInterval(() => {
      this.executions.sweepOverdue().catch((err) => this.infra.logger.error({ err }, 'overdue sweep failed'));
    }, 1000);
  }

  async onApplicationShutdown() {
    clearInterval(this.sweeper);
    await this.gateway.close();
    await this.executions.idle();
  }

  isConnected(device: DeviceIdentity): boolean {
    return this.gateway.isConnected(device);
  }

  sendSubmit(device: DeviceIdentity, frame: Omit<SubmitFrameV1, 'v' | 'seq'>): boolean {
    return this.gateway.send(device, frame);
  }

  sendCancel(device: DeviceIdentity, requestId: string, reason: string): void {
    this.gateway.send(device, { type: 'cancel', request_id: requestId, reason });
  }

  sendStatusQuery(device: DeviceIdentity, requestId: string): void {
    this.gateway.send(device, { type: 'status_query', request_id: requestId });
  }

  connected(): DeviceIdentity[] {
    return this.gateway.connectedDevices().map((d) => ({ tenant: d.tenant, deviceId: d.deviceId }));
  }
}
