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
import { registerSchema } from '../schema-registry.js';
import { fragments, List, Nullable, Struct, Type, type Static, type TSchema } from '../wire.js';

export const DeviceEventType = {
  CredentialIssued: 'ormuz.device.credential_issued.v1',
  CredentialsEnded: 'ormuz.device.credentials_ended.v1',
  ReportRefused: 'ormuz.device.report_refused.v1',
} as const;

export type DeviceEventType = (typeof DeviceEventType)[keyof typeof DeviceEventType];

export const DEVICE_EVENT_TYPES: readonly DeviceEventType[] = Object.freeze(Object.values(DeviceEventType));

const id = fragments.identifier;

/** A token was given to the device (`issue`, `rotate`, or `env`: read from DEVICE_TOKENS at start). */
export const CredentialIssuedV1 = Struct({
  device_id: id,
  credential_id: id,
  via: Type.Enum(['issue', 'rotate', 'env']),
  /** Null: valid until revoked. */
  expires_at: Nullable(fragments.time),
});
export type CredentialIssuedV1 = Static<typeof CredentialIssuedV1>;

/**
 * Tokens of the device stopped (or will stop) being accepted: `revoked` now, or `rotated` with an end after a grace
 * period. Live connections that used them are closed at `ends_at`.
 */
export const CredentialsEndedV1 = Struct({
  device_id: id,
  credential_ids: List(id, { minItems: 1, maxItems: 1000 }),
  reason: Type.Enum(['revoked', 'rotated']),
  ends_at: fragments.time,
});
export type CredentialsEndedV1 = Static<typeof CredentialsEndedV1>;

/**
 * Why the bridge refused a device's claim or report:
 * - `not_assigned`: the request is assigned to another device of the tenant;
 * - `unknown_request`: the tenant has no such request for any device (a made-up id, or another tenant's: the two
 *   are not told apart, so a device never learns another tenant's ids);
 * - `not_started`: an outcome for a request of this device whose start was never recorded (it may not run).
 */
export const ReportRefusalReason = Type.Enum(['not_assigned', 'unknown_request', 'not_started']);
export type ReportRefusalReason = Static<typeof ReportRefusalReason>;

/** A device claimed or reported a request it does not hold; nothing about the request was recorded. */
export const ReportRefusedV1 = Struct({
  device_id: id,
  /** The connection it came from; null when unknown. */
  session_id: Nullable(id),
  request_id: id,
  frame_type: Type.Enum(['start_claim', 'outcome', 'status_report', 'error']),
  /** The device the request is assigned to; null when no device of the tenant holds it. */
  assigned_device_id: Nullable(id),
  reason: ReportRefusalReason,
});
export type ReportRefusedV1 = Static<typeof ReportRefusedV1>;

export type DeviceEventDraft =
  | EventDraft<'ormuz.device.credential_issued.v1', CredentialIssuedV1>
  | EventDraft<'ormuz.device.credentials_ended.v1', CredentialsEndedV1>
  | EventDraft<'ormuz.device.report_refused.v1', ReportRefusedV1>;

const DEVICE_EVENT_SCHEMAS: Readonly<Record<DeviceEventType, TSchema>> = {
  [DeviceEventType.CredentialIssued]: CredentialIssuedV1,
  [DeviceEventType.CredentialsEnded]: CredentialsEndedV1,
  [DeviceEventType.ReportRefused]: ReportRefusedV1,
};

for (const type of DEVICE_EVENT_TYPES) {
  registerSchema(type, { $schema: 'https://json-schema.org/draft/2020-12/schema', title: type, ...DEVICE_EVENT_SCHEMAS[type] });
}
