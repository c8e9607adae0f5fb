/**
 * The bridge's appends to a call on the log: each one a command of the tool-call decider, appended with the expected
 * sequence of the state it was decided on, so a seal and a start (or a dispatch) can never both win. The dispatcher
 * and the execution protocol both write through here.
 */
import { Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import type { Loaded } from '@ormuz/event-log';
import { ToolCalls } from '@ormuz/service-kit';
import { isToolCallError, type ToolCallState } from '@ormuz/tool-call';
import { BridgeMetrics } from '../metrics.js';

/** How an outcome is recorded: as the device reported it, or as its journal proves it. */
export interface ReportedOutcome {
  readonly status: 'succeeded' | 'failed';
  readonly result?: unknown;
  readonly error?: { readonly code: string; readonly message: string };
}

/** Ties every append to the call it concerns (the call id correlates the whole lifecycle). */
const causeOf = (callId: string) => ({ correlationid: callId, causationid: randomUUID() });

@Injectable()
export class ExecutionLog {
  constructor(
    private readonly calls: ToolCalls,
    private readonly metrics: BridgeMetrics,
  ) {}

  /**
   * Records the dispatch of an authorized call to its device, with its execution deadline. `known`: the call's state
   * and version as the executions projection's committed batch folded them; decided against without a load (a stale
   * one costs a refused append and a fresh load). Throws the decider's error when the call moved on (sealed, say).
   */
  async dispatch(
    tenant: string,
    callId: string,
    deviceId: string,
    deadline: string,
    known?: Loaded<ToolCallState>,
  ): Promise<void> {
    await this.calls.execute(
      tenant,
      callId,
      {
        type: 'DispatchCall',
        data: { call_id: callId, request_id: callId, executor: { kind: 'device', device_id: deviceId }, deadline },
      },
      causeOf(callId),
      known ? { known } : {},
    );
  }

  /** Records the start the device claimed; throws the decider's error when a seal (or another start) won. */
  async claimStart(tenant: string, callId: string, requestId: string, deviceId: string, bootId: string): Promise<void> {
    await this.calls.execute(
      tenant,
      callId,
      { type: 'ClaimStart', data: { call_id: callId, request_id: requestId, executor_id: deviceId, boot_id: bootId } },
      causeOf(callId),
    );
  }

  /**
   * Appends the call's outcome as the device reported it (or as its journal proves it). `authorizedAt`, when the
   * executions table knows it, times the call for `ormuz_bridge_call_seconds`.
   */
  async recordOutcome(
    tenant: string,
    callId: string,
    requestId: string,
    f: ReportedOutcome,
    authorizedAt?: Date | null,
  ): Promise<void> {
    await this.calls.execute(
      tenant,
      callId,
      {
        type: 'RecordOutcome',
        data: {
          call_id: callId,
          request_id: requestId,
          outcome:
            f.status === 'succeeded'
              ? { kind: 'succeeded', result: (f.result ?? null) as never }
              : {
                  kind: 'failed',
                  error: f.error ?? { code: 'unknown', message: 'the device reported a failure without details' },
                },
        },
      },
      causeOf(callId),
    );
    this.metrics.recorded(f.status, authorizedAt);
  }

  /** Seals a call that has not started; a call that moved on meanwhile is left as it is. */
  async seal(tenant: string, callId: string, reason: string): Promise<void> {
    await this.calls
      .execute(
        tenant,
        callId,
        { type: 'SealCall', data: { call_id: callId, sealed_by: 'device-bridge', reason } },
        causeOf(callId),
      )
      .catch((err) => {
        if (!isToolCallError(err)) throw err;
      });
  }

  /** Marks a started call's outcome unknown; a call that finished meanwhile (the device reported first) is left as it is. */
  async markUnknown(
    tenant: string,
    callId: string,
    requestId: string,
    cause: 'timeout' | 'connection_lost' | 'reboot',
    detail: string,
  ): Promise<void> {
    await this.calls
      .execute(
        tenant,
        callId,
        { type: 'MarkOutcomeUnknown', data: { call_id: callId, request_id: requestId, cause, detail } },
        causeOf(callId),
      )
      .then(
        () => this.metrics.recorded('outcome_unknown'),
        (err: unknown) => {
          if (!isToolCallError(err)) throw err;
        },
      );
  }

  /** The call's state on the log, read fresh (never the cache), with the trace of its last message. */
  load(tenant: string, callId: string): Promise<Loaded<ToolCallState>> {
    return this.calls.load(tenant, callId);
  }

  /** The call's status on the log, read fresh (never the cache): for deciding what a report proves. */
  async status(tenant: string, callId: string): Promise<ToolCallState['status']> {
    return (await this.calls.load(tenant, callId)).state.status;
  }
}
