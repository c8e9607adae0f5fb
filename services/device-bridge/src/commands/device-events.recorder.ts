/**
 * Appends the bridge's facts about a device (credentials issued and ended, refused reports) to the `devices` stream,
 * which audit archives with every other event. A fact is recorded once even when the append is retried (msgID).
 */
import { Inject, Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { aggregateSubject, envelope, type DeviceEventDraft } from '@ormuz/contracts';
import { streamName } from '@ormuz/event-log';
import { INFRA, type Infrastructure } from '@ormuz/service-kit';

export const DEVICE_BRIDGE_SOURCE = '/ormuz/device-bridge';

@Injectable()
export class DeviceEventsRecorder {
  readonly stream: string;

  constructor(@Inject(INFRA) private readonly infra: Infrastructure) {
    this.stream = streamName(infra.config.namespace, 'devices');
  }

  subject(tenant: string, deviceId: string): string {
    return aggregateSubject(this.infra.config.namespace, 'devices', tenant, deviceId);
  }

  /** Records one fact about `deviceId`; `correlationid` ties it to a call or an operator request when there is one. */
  async record(tenant: string, deviceId: string, draft: DeviceEventDraft, correlationid = deviceId): Promise<void> {
    const subject = this.subject(tenant, deviceId);
    const event = envelope<string, unknown>(draft, {
      source: DEVICE_BRIDGE_SOURCE,
      tenant,
      subject: deviceId,
      correlationid,
      causationid: randomUUID(),
      time: new Date(),
    });
    await this.infra.store.record(subject, event);
  }

  /** The device's recorded facts, oldest first. */
  history(tenant: string, deviceId: string) {
    return this.infra.store.history(this.stream, this.subject(tenant, deviceId));
  }
}
