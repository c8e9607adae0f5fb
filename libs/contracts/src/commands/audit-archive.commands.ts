/**
 * Wire contracts of the audit archive's integrity and data-protection commands: verifying a tenant's hash chain
 * (`audit.verify`), erasing call payloads and results (`audit.erase`), and per-tenant retention
 * (`audit.retention.set`, `audit.retention.get`). The chain's canonical form is in docs/archive-chain.md.
 */
import { registerSchema } from '../schema-registry.js';
import { fragments, List, Nullable, Struct, Type, type Static } from '../wire.js';

/** Most archived events one `audit.verify` request re-computes. */
export const AUDIT_VERIFY_MAX_LIMIT = 10_000;
/** Events re-computed when `limit` is omitted. */
export const AUDIT_VERIFY_DEFAULT_LIMIT = 5_000;

const hashHex = Type.String({ pattern: '^[0-9a-f]{64}$' });

/** A verified link: a position in the tenant's chain and its hash. */
export const ChainLinkV1 = Struct({ position: Type.Integer({ minimum: 0 }), hash: hashHex });
export type ChainLinkV1 = Static<typeof ChainLinkV1>;

/**
 * `audit.verify`: re-computes a stretch of one tenant's chain, from the link after `after` (default: the start) for
 * at most `limit` events. Pass the reply's `next` as `after` to go on; a whole chain is verified a page at a time.
 */
export const AuditVerifyRequestV1 = Struct({
  tenant: fragments.identifier,
  /** The last link already verified (its position and hash as that verification computed them). */
  after: Type.Optional(ChainLinkV1),
  /** 1 to {@link AUDIT_VERIFY_MAX_LIMIT}. Default {@link AUDIT_VERIFY_DEFAULT_LIMIT}. */
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: AUDIT_VERIFY_MAX_LIMIT })),
});
export type AuditVerifyRequestV1 = Static<typeof AuditVerifyRequestV1>;

/** The first link that does not hold, and why. */
export const BrokenLinkV1 = Struct({
  /** The chain position where the break shows (the position expected there). */
  position: Type.Integer(),
  /** Id of the archived event found at that place. */
  event_id: Type.String(),
  /**
   * `position`: a row is missing or out of place; `prev_hash`: the row does not point at the link before it;
   * `data_hash` / `erasable_hash`: the data no longer matches its hash; `row_hash`: a covered field was changed;
   * `head`: the chain ends before or after where the recorded head says.
   */
  reason: Type.Union([
    Type.Literal('position'),
    Type.Literal('prev_hash'),
    Type.Literal('data_hash'),
    Type.Literal('erasable_hash'),
    Type.Literal('row_hash'),
    Type.Literal('head'),
  ]),
  expected: Type.String(),
  found: Type.String(),
});
export type BrokenLinkV1 = Static<typeof BrokenLinkV1>;

export const AuditVerifyReplyV1 = Struct({
  tenant: Type.String(),
  /** Events re-computed by this request. */
  checked: Type.Integer(),
  /** The last link this request verified (the request's `after` when it verified none). */
  last: ChainLinkV1,
  /** Where to go on from; null when the chain is verified to its recorded head, or broken. */
  next: Nullable(ChainLinkV1),
  broken: Nullable(BrokenLinkV1),
});
export type AuditVerifyReplyV1 = Static<typeof AuditVerifyReplyV1>;

/** What an erasure or retention rule removes from archived events: call payloads, call results (and errors). */
export const ErasableKindV1 = Type.Union([Type.Literal('payloads'), Type.Literal('results')]);

/**
 * `audit.erase`: removes the erasable field (a call's payload, result or error) of the tenant's archived events
 * recorded before `before`, and the same values from its call records. The chain keeps each field's hash.
 */
export const AuditEraseRequestV1 = Struct({
  tenant: fragments.identifier,
  /** RFC 3339; events recorded strictly before it are erased. Must not be in the future. */
  before: fragments.time,
  /** Default both. */
  kinds: Type.Optional(List(ErasableKindV1, { minItems: 1, maxItems: 2, uniqueItems: true })),
});
export type AuditEraseRequestV1 = Static<typeof AuditEraseRequestV1>;

export const AuditEraseReplyV1 = Struct({
  tenant: Type.String(),
  before: Type.String(),
  kinds: List(ErasableKindV1),
  /** Archived events whose erasable field was removed by this request (already erased ones are not counted). */
  erased_events: Type.Integer(),
  /** Call records whose payload, result or error were removed. */
  erased_calls: Type.Integer(),
});
export type AuditEraseReplyV1 = Static<typeof AuditEraseReplyV1>;

/** Longest retention: 100 years, in days. */
export const AUDIT_RETENTION_MAX_DAYS = 36_500;
const days = Nullable(Type.Integer({ minimum: 1, maximum: AUDIT_RETENTION_MAX_DAYS }));

/**
 * `audit.retention.set`: how many days the tenant's call payloads and results are kept; `null` keeps them forever.
 * A field left out keeps its current setting. The audit service erases what is older periodically.
 */
export const AuditRetentionSetRequestV1 = Struct({
  tenant: fragments.identifier,
  payloads_days: Type.Optional(days),
  results_days: Type.Optional(days),
});
export type AuditRetentionSetRequestV1 = Static<typeof AuditRetentionSetRequestV1>;

export const AuditRetentionGetRequestV1 = Struct({ tenant: fragments.identifier });
export type AuditRetentionGetRequestV1 = Static<typeof AuditRetentionGetRequestV1>;

/** A tenant's retention; `null` days keep that kind forever. */
export const AuditRetentionV1 = Struct({
  tenant: Type.String(),
  payloads_days: days,
  results_days: days,
  /** RFC 3339; null when never set. */
  updated_at: Nullable(Type.String()),
});
export type AuditRetentionV1 = Static<typeof AuditRetentionV1>;

export const AUDIT_VERIFY_V1 = 'audit.verify.v1';
export const AUDIT_ERASE_V1 = 'audit.erase.v1';
export const AUDIT_RETENTION_SET_V1 = 'audit.retention.set.v1';
export const AUDIT_RETENTION_GET_V1 = 'audit.retention.get.v1';

registerSchema(AUDIT_VERIFY_V1, AuditVerifyRequestV1);
registerSchema(AUDIT_ERASE_V1, AuditEraseRequestV1);
registerSchema(AUDIT_RETENTION_SET_V1, AuditRetentionSetRequestV1);
registerSchema(AUDIT_RETENTION_GET_V1, AuditRetentionGetRequestV1);
