import { Controller } from '@nestjs/common';
import type { RpcRequestOf } from '@ormuz/contracts';
import { Rpc } from '@ormuz/service-kit';
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
  @Rpc('device-bridge.devices')
  async devices({ tenant }: RpcRequestOf<'device-bridge.devices'>) {
    return { devices: await this.link.routes.devices(tenant) };
  }

  @Rpc('device-bridge.credentials.issue')
  issue(request: RpcRequestOf<'device-bridge.credentials.issue'>) {
    return this.credentials.issue(request);
  }

  @Rpc('device-bridge.credentials.rotate')
  rotate(request: RpcRequestOf<'device-bridge.credentials.rotate'>) {
    return this.credentials.rotate(request);
  }

  @Rpc('device-bridge.credentials.revoke')
  revoke(request: RpcRequestOf<'device-bridge.credentials.revoke'>) {
    return this.credentials.revoke(request);
  }

  @Rpc('device-bridge.credentials.list')
  list(request: RpcRequestOf<'device-bridge.credentials.list'>) {
    return this.credentials.list(request);
  }
}
