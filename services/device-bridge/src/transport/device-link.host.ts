/**
 * Hosts the WebSocket gateway inside the Nest app: authenticates devices against the stored credentials, routes every
 * protocol step to the ExecutionProtocol (which records it on the log) and every opening of a device's window to the
 * DeviceDispatcher, and links this replica to the others through {@link DeviceRoutes}, so a command for a device
 * reaches whichever replica holds its connection.
 */
import { Inject, Injectable, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import type { SubmitFrameV1 } from '@ormuz/contracts';
import { INFRA, type Infrastructure } from '@ormuz/service-kit';
import { DeviceCredentialsService, type CredentialsEndedListener } from '../commands/device-credentials.service.js';
import { DeviceDispatcher } from '../commands/device-dispatcher.js';
import type { DeviceLink } from '../commands/device-link.js';
import { ExecutionProtocol } from '../commands/execution-protocol.js';
import { DEVICE_BRIDGE_CONFIG, type DeviceBridgeConfig } from '../config.js';
import type { DeviceIdentity } from '../domain/device-credentials.js';
import { BridgeMetrics } from '../metrics.js';
import { DeviceGateway, type DeviceCommandDraft } from './device-gateway.js';
import { DeviceRoutes, type ConnectedDeviceView, type LinkMessage, type LinkReceiver } from './device-routes.js';

/** How often every replica looks for ready calls of its devices even without an announcement, in ms. */
const DISPATCH_SAFETY_NET_MS = 1000;

@Injectable()
export class DeviceLinkHost implements DeviceLink, LinkReceiver, CredentialsEndedListener, OnApplicationBootstrap, OnApplicationShutdown {
  readonly gateway: DeviceGateway;
  readonly routes: DeviceRoutes;
  private safetyNet: NodeJS.Timeout | undefined;

  constructor(
    private readonly protocol: ExecutionProtocol,
    private readonly dispatcher: DeviceDispatcher,
    credentials: DeviceCredentialsService,
    @Inject(DEVICE_BRIDGE_CONFIG) private readonly config: DeviceBridgeConfig,
    @Inject(INFRA) private readonly infra: Infrastructure,
    metrics: BridgeMetrics,
  ) {
    const log = infra.logger.child({ component: 'device-gateway' });
    this.routes = new DeviceRoutes(infra.nc, config.namespace, `replica-${randomUUID()}`, this, log);
    this.gateway = new DeviceGateway({
      host: config.host,
      port: config.port,
      heartbeatIntervalMs: config.heartbeatMs,
      authenticator: { authenticate: (hello) => credentials.authenticate(hello) },
      handler: {
        onConnected: async (device) => {
          this.routes.hold(device, device.sessionId, device.connectedAt);
          // Status queries for what the log has in flight first, then what was dispatched and may be lost, then new calls.
          await this.protocol.onConnected(device, device.bootId);
          await this.dispatcher.onConnected(device);
        },
        onStartClaim: (device, frame) => this.protocol.onStartClaim(device, frame, device.bootId),
        onOutcome: (device, frame) => this.protocol.onOutcome(device, frame),
        onStatusReport: (device, frame) => this.protocol.onStatusReport(device, frame),
        onProgress: (device, frame) => this.protocol.onProgress(device, frame),
        onDeviceError: (device, frame) => this.protocol.onDeviceError(device, frame),
        onDisconnected: async (device, cause) => {
          // A newer connection of the device is live (here, or on another replica that took it over).
          const superseded = this.gateway.isConnected(device) || cause.kind === 'replaced';
          if (!this.gateway.isConnected(device)) {
            this.routes.release(device);
            this.dispatcher.onDisconnected(device);
          }
          await this.protocol.onDisconnected(device, cause.kind, superseded);
        },
        onWindowOpen: (device) => this.dispatcher.onWindowOpen(device),
      },
      logger: {
        debug: (m, f) => log.debug(f ?? {}, m),
        info: (m, f) => log.info(f ?? {}, m),
        warn: (m, f) => log.warn(f ?? {}, m),
        error: (m, f) => log.error(f ?? {}, m),
      },
    });
    metrics.countConnections(() => this.gateway.connectedDevices().length);
    protocol.attach(this);
    dispatcher.attach(this);
    credentials.onEnded(this);
  }

  async onApplicationBootstrap() {
    this.routes.start();
    const address = await this.gateway.listen();
    this.infra.endpoints.devices = this.gateway.url();
    this.infra.logger.info({ port: address.port, host: this.config.host, replica: this.routes.replicaId }, 'device gateway listening');
    this.safetyNet = setInterval(() => this.dispatcher.kick(), DISPATCH_SAFETY_NET_MS);
    this.safetyNet.unref();
  }

  async onApplicationShutdown() {
    clearInterval(this.safetyNet);
    await this.gateway.close();
    this.routes.stop();
    await this.dispatcher.idle();
  }

  // --- DeviceLink: what the dispatcher and the protocol send ------------------------------------------------------------

  isConnected(device: DeviceIdentity): boolean {
    return this.gateway.isConnected(device);
  }

  sendSubmit(device: DeviceIdentity, frame: Omit<SubmitFrameV1, 'v' | 'seq'>): boolean {
    return this.gateway.send(device, frame);
  }

  room(device: DeviceIdentity): number {
    return this.gateway.room(device);
  }

  sendCancel(device: DeviceIdentity, requestId: string, reason: string): void {
    this.command(device, { type: 'cancel', request_id: requestId, reason });
  }

  /** Tells the device never to run the request (it was sealed before it started). */
  sendSeal(device: DeviceIdentity, requestId: string): void {
    this.command(device, { type: 'seal', request_id: requestId });
  }

  sendStatusQuery(device: DeviceIdentity, requestId: string): void {
    this.command(device, { type: 'status_query', request_id: requestId });
  }

  /** Here when the device is connected here; otherwise to the replica that holds it, if any. */
  private command(device: DeviceIdentity, frame: DeviceCommandDraft): void {
    if (!this.gateway.send(device, frame)) this.routes.publish(device, { op: 'command', frame });
  }

  // --- LinkReceiver: what other replicas ask of this one ----------------------------------------------------------

  onLinkMessage(device: DeviceIdentity, message: LinkMessage): void {
    switch (message.op) {
      case 'command':
        this.gateway.send(device, message.frame);
        return;
      case 'takeover':
        if (this.gateway.yieldTo(device, message.session_id, new Date(message.connected_at))) {
          this.infra.logger.info({ tenant: device.tenant, device: device.deviceId }, 'device connected to another replica; let go');
        }
        return;
      case 'credentials_ended':
        this.gateway.endCredentials(device, message.credential_ids);
        return;
    }
  }

  onReady(): void {
    this.dispatcher.kick();
  }

  localDevices(tenant: string): ConnectedDeviceView[] {
    return this.gateway
      .connectedDevices()
      .filter((d) => d.tenant === tenant)
      .map((d) => ({
        device_id: d.deviceId,
        boot_id: d.bootId,
        session_id: d.sessionId,
        connected_at: d.connectedAt.toISOString(),
        replica: this.routes.replicaId,
      }));
  }

  // --- CredentialsEndedListener -----------------------------------------------------------------------------------

  credentialsEnded(tenant: string, deviceId: string, credentialIds: readonly string[]): void {
    const device = { tenant, deviceId };
    if (!this.gateway.endCredentials(device, credentialIds)) this.routes.publish(device, { op: 'credentials_ended', credential_ids: credentialIds });
  }
}
