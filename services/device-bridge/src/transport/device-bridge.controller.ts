import { Controller } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import { assertValid, fragments, registerSchema } from '@ormuz/contracts';
import { DeviceLinkHost } from './device-link.host.js';

const DEVICES_V1 = 'device-bridge.devices.v1';
registerSchema(DEVICES_V1, {
  type: 'object',
  additionalProperties: false,
  required: ['tenant'],
  properties: { tenant: fragments.identifier },
});

/** NATS commands of the bridge. */
@Controller()
export class DeviceBridgeController {
  constructor(private readonly link: DeviceLinkHost) {}

  /** The tenant's devices connected to this replica. */
  @MessagePattern('devices')
  devices(@Payload() body: unknown) {
    const { tenant } = assertValid<{ tenant: string }>(DEVICES_V1, body);
    return {
      devices: this.link.gateway
        .connectedDevices()
        .filter((d) => d.tenant === tenant)
        .map((d) => ({ device_id: d.deviceId, boot_id: d.bootId, connected_at: d.connectedAt.toISOString() })),
    };
  }
}
