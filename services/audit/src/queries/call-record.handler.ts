import { Query, QueryHandler, type IQueryHandler } from '@nestjs/cqrs';
import type {
  AuditCallRecordV1,
  AuditCallRequestV1,
  CallErrorV1,
  CallExecutorV1,
  CallOriginV1,
  JsonValue,
  OutcomeUnknownCauseV1,
} from '@ormuz/contracts';
import { CallRecordNotFoundError } from '../domain/errors.js';
import { AuditRepository, type CallRecordRow } from '../persistence/audit.repository.js';

export class CallRecordQuery extends Query<AuditCallRecordV1> {
  constructor(readonly request: AuditCallRequestV1) {
    super();
  }
}

/** Reads one call's audit row for one tenant. Another tenant's call is answered exactly like a missing one. */
@QueryHandler(CallRecordQuery)
export class CallRecordHandler implements IQueryHandler<CallRecordQuery> {
  constructor(private readonly repo: AuditRepository) {}

  async execute({ request }: CallRecordQuery): Promise<AuditCallRecordV1> {
    const row = await this.repo.findCallRecord(request.tenant, request.call_id);
    if (!row) throw new CallRecordNotFoundError(request.tenant, request.call_id);
    return toCallRecordV1(row);
  }
}

const iso = (d: Date | null): string | null => (d === null ? null : d.toISOString());

/** The wire form of a row: times as RFC 3339, NULL as null, nothing defaulted. */
export function toCallRecordV1(r: CallRecordRow): AuditCallRecordV1 {
  return {
    tenant: r.tenant,
    call_id: r.call_id,
    tool: r.tool,
    contract_version: r.contract_version,
    agent_id: r.agent_id,
    correlation_id: r.correlation_id,
    origin: r.origin as CallOriginV1,
    target_device_id: r.target_device_id,
    payload: r.payload,
    payload_sha256: r.payload_sha256,
    status: r.status,
    decision: r.decision as AuditCallRecordV1['decision'],
    decided_at: iso(r.decided_at),
    refusal_code: r.refusal_code,
    refusal_message: r.refusal_message,
    risk_level: r.risk_level as AuditCallRecordV1['risk_level'],
    risk_reasons: r.risk_reasons,
    approval_id: r.approval_id,
    approval_summary: r.approval_summary,
    approval_expires_at: iso(r.approval_expires_at),
    approval_outcome: r.approval_outcome as AuditCallRecordV1['approval_outcome'],
    decided_by: r.decided_by,
    approval_decided_at: iso(r.approval_decided_at),
    denial_reason: r.denial_reason,
    authorized_at: iso(r.authorized_at),
    request_id: r.request_id,
    executor: r.executor as CallExecutorV1 | null,
    deadline: iso(r.deadline),
    dispatched_at: iso(r.dispatched_at),
    executor_id: r.executor_id,
    boot_id: r.boot_id,
    started_at: iso(r.started_at),
    result: r.result as JsonValue | null,
    error: r.error as CallErrorV1 | null,
    unknown_cause: r.unknown_cause as OutcomeUnknownCauseV1 | null,
    unknown_detail: r.unknown_detail,
    unknown_at: iso(r.unknown_at),
    sealed_by: r.sealed_by,
    seal_reason: r.seal_reason,
    sealed_at: iso(r.sealed_at),
    requested_at: r.requested_at.toISOString(),
    finished_at: iso(r.finished_at),
    updated_at: r.updated_at.toISOString(),
    last_seq: r.last_seq,
    payload_erased_at: iso(r.payload_erased_at),
    result_erased_at: iso(r.result_erased_at),
  };
}
