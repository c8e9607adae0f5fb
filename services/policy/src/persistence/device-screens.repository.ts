import { Inject, Injectable } from '@nestjs/common';
import type { Kysely } from 'kysely';
import { streamName } from '@ormuz/event-log';
import { INFRA, type Infrastructure } from '@ormuz/service-kit';
import type { ObservedElement, ScreenObservation } from '@ormuz/gate';
import { DEVICE_SCREENS_PROJECTION, type DeviceScreensDB } from '../projections/device-screens.projection.js';
import { POLICY_SCHEMA } from './migrations.js';

interface CheckpointsDB {
  projection_checkpoints: { projection: string; stream: string; seq: number };
}

/** The read model has not caught up with the log in time, so the latest observation cannot be told. */
export class ObservationLaggingError extends Error {}

/** Longest wait for the read model to reach the log's head, in ms. */
const CATCH_UP_MS = 3_000;
const FIRST_POLL_MS = 1;
const MAX_POLL_MS = 10;

/**
 * The only code that reads `policy.device_screens`. A read first waits until the projection has applied every event
 * the calls stream held when the read began: an observation whose result the model has seen was on the log before
 * the model's next call, so that call is judged on it (read your own writes across the log and the read model).
 */
@Injectable()
export class DeviceScreensRepository {
  private readonly db: Kysely<DeviceScreensDB & CheckpointsDB>;
  private readonly stream: string;

  constructor(@Inject(INFRA) private readonly infra: Infrastructure) {
    this.db = (infra.db as Kysely<DeviceScreensDB & CheckpointsDB>).withSchema(POLICY_SCHEMA);
    this.stream = streamName(infra.config.namespace, 'calls');
  }

  /**
   * The device's latest observation on the log, or `null` when it has none.
   *
   * @throws ObservationLaggingError when the read model does not reach the log's head within a few seconds.
   */
  async latest(tenant: string, deviceId: string): Promise<ScreenObservation | null> {
    await this.caughtUp();
    const row = await this.db
      .selectFrom('device_screens')
      .select(['foreground_package', 'screen', 'elements', 'changed_by'])
      .where('tenant', '=', tenant)
      .where('device_id', '=', deviceId)
      .executeTakeFirst();
    if (!row) return null;
    const elements = (typeof row.elements === 'string' ? JSON.parse(row.elements) : row.elements) as ObservedElement[];
    return { foreground_package: row.foreground_package, screen: row.screen, elements, changed_by: row.changed_by };
  }

  private async caughtUp(): Promise<void> {
    const head = (await this.infra.jsm.streams.info(this.stream)).state.last_seq;
    const deadline = Date.now() + CATCH_UP_MS;
    for (let wait = FIRST_POLL_MS; ; wait = Math.min(MAX_POLL_MS, wait * 2)) {
      const checkpoint = await this.db
        .selectFrom('projection_checkpoints')
        .select('seq')
        .where('projection', '=', DEVICE_SCREENS_PROJECTION)
        .where('stream', '=', this.stream)
        .executeTakeFirst();
      if (Number(checkpoint?.seq ?? 0) >= head) return;
      if (Date.now() >= deadline) {
        throw new ObservationLaggingError(
          `policy's view of device screens is at sequence ${Number(checkpoint?.seq ?? 0)} of ${head}`,
        );
      }
      await new Promise((resolve) => setTimeout(resolve, wait));
    }
  }
}
