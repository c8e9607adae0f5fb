/**
 * How bridge replicas reach each other's devices, over core NATS (nothing here is stored: the log is):
 * - `<ns>.bridge.link.<tenant>.<device>`: the replica holding the device's connection subscribes while it holds it.
 *   Commands for the device (cancel, status query, seal), a takeover by a newer connection on another replica, and
 *   the end of the credential it used arrive there, wherever they were decided;
 * - `<ns>.bridge.ready`: the replica that projects the calls stream announces that calls became ready, and every
 *   replica dispatches those of its own devices;
 * - `<ns>.bridge.devices`: a scatter request every replica answers with its connected devices of a tenant.
 * Tenant and device ids are identifiers (no `.`, `*`, `>`), checked before any subject is built.
 */
import type { NatsConnection, Subscription } from '@nats-io/transport-node';
import { assertIdentifier, assertValid, fragments, registerSchema, type ConnectedDeviceV1 } from '@ormuz/contracts';
import type { Logger } from 'pino';
import type { DeviceAddress, DeviceCommandDraft } from './device-gateway.js';

/** What travels on a device's link subject. */
export type LinkMessage =
  | { readonly op: 'command'; readonly frame: DeviceCommandDraft }
  | { readonly op: 'takeover'; readonly session_id: string; readonly connected_at: string }
  | { readonly op: 'credentials_ended'; readonly credential_ids: readonly string[] };

/** A device connected to some replica, as `devices` reports it. */
export type ConnectedDeviceView = ConnectedDeviceV1;

const LINK_MESSAGE_V1 = 'device-bridge.link-message.v1';
registerSchema(LINK_MESSAGE_V1, {
  oneOf: [
    {
      type: 'object',
      additionalProperties: false,
      required: ['op', 'frame'],
      properties: {
        op: { const: 'command' },
        frame: {
          type: 'object',
          required: ['type', 'request_id'],
          properties: { type: { enum: ['cancel', 'status_query', 'seal'] }, request_id: fragments.identifier },
        },
      },
    },
    {
      type: 'object',
      additionalProperties: false,
      required: ['op', 'session_id', 'connected_at'],
      properties: { op: { const: 'takeover' }, session_id: fragments.identifier, connected_at: fragments.time },
    },
    {
      type: 'object',
      additionalProperties: false,
      required: ['op', 'credential_ids'],
      properties: {
        op: { const: 'credentials_ended' },
        credential_ids: { type: 'array', maxItems: 1000, items: fragments.identifier },
      },
    },
  ],
});

const DEVICES_QUERY_V1 = 'device-bridge.devices-query.v1';
registerSchema(DEVICES_QUERY_V1, {
  type: 'object',
  additionalProperties: false,
  required: ['tenant'],
  properties: { tenant: fragments.identifier },
});

/** What a replica does with messages for devices it holds. */
export interface LinkReceiver {
  onLinkMessage(device: DeviceAddress, message: LinkMessage): void;
  /** Calls became ready somewhere: dispatch this replica's share. */
  onReady(): void;
  /** This replica's connected devices of the tenant. */
  localDevices(tenant: string): ConnectedDeviceView[];
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

export class DeviceRoutes {
  private readonly links = new Map<string, Subscription>();
  private readonly shared: Subscription[] = [];

  constructor(
    private readonly nc: NatsConnection,
    private readonly namespace: string,
    readonly replicaId: string,
    private readonly receiver: LinkReceiver,
    private readonly logger: Logger,
  ) {}

  private linkSubject(device: DeviceAddress): string {
    assertIdentifier('tenant', device.tenant);
    assertIdentifier('device id', device.deviceId);
    return `${this.namespace}.bridge.link.${device.tenant}.${device.deviceId}`;
  }

  /** Subscribes to the replica-wide subjects. */
  start(): void {
    this.shared.push(
      // The announcing replica dispatched its own share already; the payload names it.
      this.nc.subscribe(`${this.namespace}.bridge.ready`, {
        callback: (_err, msg) => {
          if (decoder.decode(msg.data) !== this.replicaId) this.receiver.onReady();
        },
      }),
      this.nc.subscribe(`${this.namespace}.bridge.devices`, {
        callback: (err, msg) => {
          if (err) return;
          try {
            const { tenant } = assertValid<{ tenant: string }>(DEVICES_QUERY_V1, JSON.parse(decoder.decode(msg.data)));
            msg.respond(encoder.encode(JSON.stringify(this.receiver.localDevices(tenant))));
          } catch (e) {
            this.logger.warn({ err: String(e) }, 'unreadable devices query ignored');
            msg.respond(encoder.encode('[]'));
          }
        },
      }),
    );
  }

  /**
   * This replica now holds the device's connection: listen on its link, and tell any other replica that held it to
   * let go. Its own takeover message reaches it too and is ignored by session id.
   */
  hold(device: DeviceAddress, sessionId: string, connectedAt: Date): void {
    const subject = this.linkSubject(device);
    const key = `${device.tenant}/${device.deviceId}`;
    if (!this.links.has(key)) {
      this.links.set(
        key,
        this.nc.subscribe(subject, {
          callback: (err, msg) => {
            if (err) return;
            let message: LinkMessage;
            try {
              message = assertValid<LinkMessage>(LINK_MESSAGE_V1, JSON.parse(decoder.decode(msg.data)));
            } catch (e) {
              this.logger.warn({ err: String(e), device: device.deviceId, tenant: device.tenant }, 'unreadable link message ignored');
              return;
            }
            this.receiver.onLinkMessage(device, message);
          },
        }),
      );
    }
    this.publish(device, { op: 'takeover', session_id: sessionId, connected_at: connectedAt.toISOString() });
  }

  /** The device's connection here ended. */
  release(device: DeviceAddress): void {
    const key = `${device.tenant}/${device.deviceId}`;
    this.links.get(key)?.unsubscribe();
    this.links.delete(key);
  }

  /** Sends a message to whichever replica holds the device; dropped when none does (the device is offline). */
  publish(device: DeviceAddress, message: LinkMessage): void {
    this.nc.publish(this.linkSubject(device), encoder.encode(JSON.stringify(message)));
  }

  /** Tells the other replicas that calls became ready (this one wakes its own dispatcher directly). */
  announceReady(): void {
    this.nc.publish(`${this.namespace}.bridge.ready`, encoder.encode(this.replicaId));
  }

  /** Every replica's connected devices of the tenant (replicas that answer within `maxWaitMs`). */
  async devices(tenant: string, maxWaitMs = 1000): Promise<ConnectedDeviceView[]> {
    assertIdentifier('tenant', tenant);
    const replies = await this.nc.requestMany(`${this.namespace}.bridge.devices`, encoder.encode(JSON.stringify({ tenant })), {
      strategy: 'stall',
      maxWait: maxWaitMs,
      stall: 100,
    });
    const devices: ConnectedDeviceView[] = [];
    for await (const reply of replies) devices.push(...(JSON.parse(decoder.decode(reply.data)) as ConnectedDeviceView[]));
    return devices.sort((a, b) => (a.device_id < b.device_id ? -1 : a.device_id > b.device_id ? 1 : 0));
  }

  stop(): void {
    for (const sub of [...this.shared, ...this.links.values()]) sub.unsubscribe();
    this.shared.length = 0;
    this.links.clear();
  }
}
