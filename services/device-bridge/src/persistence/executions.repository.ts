import { Inject, Injectable } from '@nestjs/common';
import type { Kysely } from 'kysely';
import { INFRA, type Infrastructure } from '@ormuz/service-kit';
import { DEVICE_BRIDGE_SCHEMA } from './migrations.js';

/** Where a device call stands, as far as the bridge needs to know. */
export type ExecutionStatus = 'requested' | 'ready' | 'dispatched' | 'started' | 'unknown' | 'finished';

export interface ExecutionRow {
  tenant: string;
  call_id: string;
  device_id: string;
  tool: string;
  payload: string;
  payload_sha256: string;
  status: ExecutionStatus;
  verdict: { level: 'low' | 'high'; reasons: string[] } | null;
  request_id: string | null;
  deadline: Date | null;
  boot_id: string | null;
  last_seq: number;
  /** When the call was authorized (NULL for rows projected before this column existed). */
  authorized_at: Date | null;
}

export interface DeviceBridgeDB {
  executions: ExecutionRow;
}

/** The only code that reads the executions table. */
@Injectable()
export class ExecutionsRepository {
  private readonly db: Kysely<DeviceBridgeDB>;
  constructor(@Inject(INFRA) infra: Infrastructure) {
    this.db = (infra.db as Kysely<DeviceBridgeDB>).withSchema(DEVICE_BRIDGE_SCHEMA);
  }

  /** Calls for this device that are authorized (to send) or dispatched but not started (to send again). */
  sendable(tenant: string, deviceId: string, limit = 100): Promise<ExecutionRow[]> {
    return this.db
      .selectFrom('executions')
      .selectAll()
      .where('tenant', '=', tenant)
      .where('device_id', '=', deviceId)
      .where('status', 'in', ['ready', 'dispatched'])
      .orderBy('last_seq')
      .limit(limit)
      .execute();
  }

  /**
   * Authorized calls not yet dispatched whose authorization is after stream sequence `after`, oldest first, across
   * devices (the dispatcher filters by connection). Paged by `last_seq`, so rows the dispatcher skips (a device
   * connected elsewhere or offline) never hide newer ones.
   */
  ready(after: number, limit = 500): Promise<ExecutionRow[]> {
    return this.db
      .selectFrom('executions')
      .selectAll()
      .where('status', '=', 'ready')
      .where('last_seq', '>', after)
      .orderBy('last_seq')
      .limit(limit)
      .execute();
  }

  /** This device's authorized calls not yet dispatched, oldest authorization first: what fills its window next. */
  readyFor(tenant: string, deviceId: string, limit: number): Promise<ExecutionRow[]> {
    return this.db
      .selectFrom('executions')
      .selectAll()
      .where('tenant', '=', tenant)
      .where('device_id', '=', deviceId)
      .where('status', '=', 'ready')
      .orderBy('last_seq')
      .limit(limit)
      .execute();
  }

  started(tenant: string, deviceId: string): Promise<ExecutionRow[]> {
    return this.db
      .selectFrom('executions')
      .selectAll()
      .where('tenant', '=', tenant)
      .where('device_id', '=', deviceId)
      .where('status', '=', 'started')
      .execute();
  }

  find(tenant: string, callId: string): Promise<ExecutionRow | undefined> {
    return this.db.selectFrom('executions').selectAll().where('tenant', '=', tenant).where('call_id', '=', callId).executeTakeFirst();
  }

  /** Dispatched or started calls whose deadline has passed. */
  overdue(now: Date, limit = 100): Promise<ExecutionRow[]> {
    return this.db
      .selectFrom('executions')
      .selectAll()
      .where('status', 'in', ['dispatched', 'started'])
      .where('deadline', '<=', now)
      .limit(limit)
      .execute();
  }

  /** Calls of this device whose outcome the device's journal may know: dispatched, started or outcome unknown. */
  unsettled(tenant: string, deviceId: string, limit = 1000): Promise<ExecutionRow[]> {
    return this.db
      .selectFrom('executions')
      .selectAll()
      .where('tenant', '=', tenant)
      .where('device_id', '=', deviceId)
      .where('status', 'in', ['dispatched', 'started', 'unknown'])
      .orderBy('last_seq')
      .limit(limit)
      .execute();
  }

  /** Authorized calls never dispatched (their device did not connect) that were authorized at or before `cutoff`. */
  waitingSince(cutoff: Date, limit = 100): Promise<ExecutionRow[]> {
    return this.db
      .selectFrom('executions')
      .selectAll()
      .where('status', '=', 'ready')
      .where('authorized_at', '<=', cutoff)
      .limit(limit)
      .execute();
  }


}
