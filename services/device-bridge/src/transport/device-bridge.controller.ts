import { Controller } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import {
  assertValid,
  DEVICE_BRIDGE_DEVICES_V1,
  DEVICE_CREDENTIALS_ISSUE_V1,
  DEVICE_CREDENTIALS_LIST_V1,
  DEVICE_CREDENTIALS_REVOKE_V1,
  DEVICE_CREDENTIALS_ROTATE_V1,
  type IssueCredentialRequestV1,
  type ListCredentialsRequestV1,
  type ListDevicesRequestV1,
  type RevokeCredentialRequestV1,
  type RotateCredentialRequestV1,
} from '@ormuz/contracts';
import { DeviceCredentialsService } from '../commands/device-credentials.service.js';
import { DeviceLinkHost } from './device-link.host.js';

/** NATS commands of the bridge (`<namespace>.cmd.device-bridge.<name>`); any replica answers. */
@Controller()
export class DeviceBridgeController {
  constructor(
    private readonly link: DeviceLinkHost,
    private readonly credentials: DeviceCredentialsService,
  ) {}

  /** The tenant's devices connected to any replica. */
  @MessagePattern('devices')
  async devices(@Payload() body: unknown) {
    const { tenant } = assertValid<ListDevicesRequestV1>(DEVICE_BRIDGE_DEVICES_V1, body);
    return { devices: await this.link.routes.devices(tenant) };
  }

  @MessagePattern('credentials.issue')
  issue(@Payload() body: unknown) {
    return this.credentials.issue(assertValid<IssueCredentialRequestV1>(DEVICE_CREDENTIALS_ISSUE_V1, body));
  }

  @MessagePattern('credentials.rotate')
  rotate(@Payload() body: unknown) {
    return this.credentials.rotate(assertValid<RotateCredentialRequestV1>(DEVICE_CREDENTIALS_ROTATE_V1, body));
  }

  @MessagePattern('credentials.revoke')
  revoke(@Payload() body: unknown) {
    return this.credentials.revoke(assertValid<RevokeCredentialRequestV1>(DEVICE_CREDENTIALS_REVOKE_V1, body));
  }

  @MessagePattern('credentials.list')
  list(@Payload() body: unknown) {
    return this.credentials.list(assertValid<ListCredentialsRequestV1>(DEVICE_CREDENTIALS_LIST_V1, body));
  }
}
