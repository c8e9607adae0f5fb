import { OrmuzError } from '@ormuz/contracts';

/** `audit.call` for a call the tenant does not have (or that is not archived yet). */
export class CallRecordNotFoundError extends OrmuzError {
  readonly code = 'call_not_found';
  constructor(tenant: string, callId: string) {
    super(
      `No call ${callId} is on record for tenant ${tenant}. Check the id and the tenant (call ids come from policy's ` +
        'submit reply); a call submitted moments ago may not be archived yet, so ask again in a second.',
    );
  }
}

/** A query whose filters contradict each other. */
export class InvalidAuditQueryError extends OrmuzError {
  readonly code = 'invalid_query';
}

/** `audit.rebuild` while that projection is already being rebuilt. */
export class RebuildInProgressError extends OrmuzError {
  readonly code = 'rebuild_in_progress';
  constructor(projection: string) {
    super(
      `${projection} is already being rebuilt. Poll audit.projections until its checkpoint reaches the target, then retry if needed.`,
    );
  }
}

/** The archive already holds another event at this stream sequence: the stream was recreated under the same name. */
export class StreamSequenceReusedError extends OrmuzError {
  readonly code = 'stream_sequence_reused';
  constructor(stream: string, seq: number, archivedId: string, eventId: string) {
    super(
      `Sequence ${seq} of ${stream} is archived as event ${archivedId}, but the stream now holds event ${eventId} there. ` +
        'The stream was deleted and recreated; archive it under a new namespace or move the old rows aside first.',
    );
  }
}

/** An event of a call whose requested event was never applied (it was parked, or the log is missing it). */
export class MissingCallRecordError extends OrmuzError {
  readonly code = 'missing_call_record';
  constructor(tenant: string, callId: string, type: string, seq: number) {
    super(
      `${type} at sequence ${seq} belongs to call ${callId} of tenant ${tenant}, which has no audit row: its requested ` +
        'event is missing or parked. Inspect audit.parked_messages, fix the cause, then rebuild call_records.',
    );
  }
}

/** An event type the call_records projection does not know (a newer producer): parked, never dropped. */
export class UnknownCallEventError extends OrmuzError {
  readonly code = 'unknown_call_event';
  constructor(type: string, seq: number) {
    super(
      `call_records does not know event type ${type} (sequence ${seq}). Deploy an audit version that does, then rebuild call_records.`,
    );
  }
}

/** An erasure whose cut-off is in the future: it would erase what has not been recorded yet. */
export class InvalidErasureError extends OrmuzError {
  readonly code = 'invalid_erasure';
  constructor(before: string) {
    super(
      `--before ${before} is in the future. Erasure removes what was recorded before a moment that has passed; give a past time.`,
    );
  }
}
