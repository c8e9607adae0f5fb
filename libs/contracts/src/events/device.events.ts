/**
 * Device events (`ormuz.device.*.v1`): the `devices` context, owned by `device-bridge`. One device of a tenant is one
 * subject, `aggregateSubject(ns, 'devices', tenant, device_id)`. They record what the bridge decided about a device
 * outside any one call, for the audit trail: credentials issued and ended, and reports the bridge refused because
 * the device named a request assigned to another device. A token never appears in an event, nor its hash.
 *
 * The protocol steps of a call (dispatched, started, outcome, unknown) are tool-call events on the call's own
 * subject, not these.
 */
import type { EventDraft } from '../envelope.js';
import { fragments, registerSchema, type JsonSchema } from '../schema-registry.js';

export const DeviceEventType = {
  CredentialIssued: 'ormuz.device.credential_issued.v1',
  CredentialsEnded: 'ormuz.device.credentials_ended.v1',
  ReportRefused: 'ormuz.device.report_refused.v1',
} as const;

export type DeviceEventType = (typeof DeviceEventType)[keyof typeof DeviceEventType];

export const DEVICE_EVENT_TYPES: readonly DeviceEventType[] = Object.freeze(Object.values(DeviceEventType));

/** A token was given to the device (`issue`, `rotate`, or `env`: read from DEVICE_TOKENS at start). */
export interface CredentialIssuedV1 {
  readonly device_id: string;
  readonly credential_id: string;
  readonly via: 'issue' | 'rotate' | 'env';
  /** Null: valid until revoked. */
  readonly expires_at: string | null;
}

/**
 * Tokens of the device stopped (or will stop) being accepted: `revoked` now, or `rotated` with an end after a grace
 * period. Live connections that used them are closed at `ends_at`.
 */
export interface CredentialsEndedV1 {
  readonly device_id: string;
  readonly credential_ids: readonly string[];
  readonly reason: 'revoked' | 'rotated';
  readonly ends_at: string;
}

/**
 * Why the bridge refused a device's claim or report:
 * - `not_assigned`: the request is assigned to another device of the tenant;
 * - `unknown_request`: the tenant has no such request for any device (a made-up id, or another tenant's: the two
 *   are not told apart, so a device never learns another tenant's ids);
 * - `not_started`: an outcome for a request of this device whose start was never recorded (it may not run).
 */
export type ReportRefusalReason = 'not_assigned' | 'unknown_request' | 'not_started';

/** A device claimed or reported a request it does not hold; nothing about the request was recorded. */
export interface ReportRefusedV1 {
  readonly device_id: string;
  /** The connection it came from; null when unknown. */
  readonly session_id: string | null;
  readonly request_id: string;
  readonly frame_type: 'start_claim' | 'outcome' | 'status_report' | 'error';
  /** The device the request is assigned to; null when no device of the tenant holds it. */
  readonly assigned_device_id: string | null;
  readonly reason: ReportRefusalReason;
}

export type DeviceEventDraft =
  | EventDraft<'ormuz.device.credential_issued.v1', CredentialIssuedV1>
  | EventDraft<'ormuz.device.credentials_ended.v1', CredentialsEndedV1>
  | EventDraft<'ormuz.device.report_refused.v1', ReportRefusedV1>;

const id = fragments.identifier;
const object = (properties: Record<string, JsonSchema>): JsonSchema => ({
  type: 'object',
  additionalProperties: false,
  required: Object.keys(properties),
  properties,
});

const DEVICE_EVENT_SCHEMAS: Readonly<Record<DeviceEventType, JsonSchema>> = {
  [DeviceEventType.CredentialIssued]: object({
    device_id: id,
    credential_id: id,
    via: { enum: ['issue', 'rotate', 'env'] },
    expires_at: { anyOf: [fragments.time, { type: 'null' }] },
  }),
  [DeviceEventType.CredentialsEnded]: object({
    device_id: id,
    credential_ids: { type: 'array', minItems: 1, maxItems: 1000, items: id },
    reason: { enum: ['revoked', 'rotated'] },
    ends_at: fragments.time,
  }),
  [DeviceEventType.ReportRefused]: object({
    device_id: id,
    session_id: { anyOf: [id, { type: 'null' }] },
    request_id: id,
    frame_type: { enum: ['start_claim', 'outcome', 'status_report', 'error'] },
    assigned_device_id: { anyOf: [id, { type: 'null' }] },
    reason: { enum: ['not_assigned', 'unknown_request', 'not_started'] },
  }),
};

for (const type of DEVICE_EVENT_TYPES) {
  registerSchema(type, { $schema: 'https://json-schema.org/draft/2020-12/schema', title: type, ...DEVICE_EVENT_SCHEMAS[type] });
}
