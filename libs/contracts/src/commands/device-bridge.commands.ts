/**
 * Wire contracts of the device-bridge service (`<namespace>.cmd.device-bridge.<name>`): connected devices and device
 * credentials. A token leaves the bridge exactly once, in the answer to `credentials.issue` or `credentials.rotate`;
 * the bridge keeps only its SHA-256.
 */
import { fragments, registerSchema } from '../schema-registry.js';

/** `devices`: the tenant's devices connected to the replica that answers. */
export interface ListDevicesRequestV1 {
  readonly tenant: string;
}

/** A credential as operators see it: never the token, never its hash. */
export interface DeviceCredentialViewV1 {
  readonly credential_id: string;
  readonly tenant: string;
  readonly device_id: string;
  readonly created_at: string;
  /** Null: valid until revoked. */
  readonly expires_at: string | null;
  readonly revoked_at: string | null;
  /** `active`, `expired` or `revoked`, as of the answer. */
  readonly state: 'active' | 'expired' | 'revoked';
}

/** `credentials.issue`: a new token for a device, beside any it already has. */
export interface IssueCredentialRequestV1 {
  readonly tenant: string;
  readonly device_id: string;
  /** Lifetime in seconds; absent: valid until revoked. */
  readonly ttl_seconds?: number;
}

/**
 * `credentials.rotate`: a new token, and the device's other active tokens end after `grace_seconds` (default 3600;
 * 0 ends them now and disconnects the connections that used them).
 */
export interface RotateCredentialRequestV1 {
  readonly tenant: string;
  readonly device_id: string;
  readonly ttl_seconds?: number;
  readonly grace_seconds?: number;
}

/** Answer to issue and rotate: the only time the token is shown. */
export interface IssuedCredentialV1 {
  readonly credential: DeviceCredentialViewV1;
  readonly token: string;
}

/** `credentials.revoke`: one credential, or every credential of the device when `credential_id` is absent. */
export interface RevokeCredentialRequestV1 {
  readonly tenant: string;
  readonly device_id: string;
  readonly credential_id?: string;
}

/** `credentials.list` */
export interface ListCredentialsRequestV1 {
  readonly tenant: string;
  readonly device_id?: string;
}

export const DEVICE_BRIDGE_DEVICES_V1 = 'device-bridge.devices.v1';
export const DEVICE_CREDENTIALS_ISSUE_V1 = 'device-bridge.credentials.issue.v1';
export const DEVICE_CREDENTIALS_ROTATE_V1 = 'device-bridge.credentials.rotate.v1';
export const DEVICE_CREDENTIALS_REVOKE_V1 = 'device-bridge.credentials.revoke.v1';
export const DEVICE_CREDENTIALS_LIST_V1 = 'device-bridge.credentials.list.v1';

/** Longest credential lifetime and rotation overlap: one year. */
const MAX_SECONDS = 366 * 24 * 3600;

registerSchema(DEVICE_BRIDGE_DEVICES_V1, {
  type: 'object',
  additionalProperties: false,
  required: ['tenant'],
  properties: { tenant: fragments.identifier },
});
/** A device of a tenant, and a token lifetime: what issue and rotate share. */
const newTokenFields = {
  tenant: fragments.identifier,
  device_id: fragments.identifier,
  ttl_seconds: { type: 'integer', minimum: 60, maximum: MAX_SECONDS },
};
registerSchema(DEVICE_CREDENTIALS_ISSUE_V1, {
  type: 'object',
  additionalProperties: false,
  required: ['tenant', 'device_id'],
  properties: newTokenFields,
});
registerSchema(DEVICE_CREDENTIALS_ROTATE_V1, {
  type: 'object',
  additionalProperties: false,
  required: ['tenant', 'device_id'],
  properties: { ...newTokenFields, grace_seconds: { type: 'integer', minimum: 0, maximum: MAX_SECONDS } },
});
registerSchema(DEVICE_CREDENTIALS_REVOKE_V1, {
  type: 'object',
  additionalProperties: false,
  required: ['tenant', 'device_id'],
  properties: {
    tenant: fragments.identifier,
    device_id: fragments.identifier,
    credential_id: fragments.identifier,
  },
});
registerSchema(DEVICE_CREDENTIALS_LIST_V1, {
  type: 'object',
  additionalProperties: false,
  required: ['tenant'],
  properties: { tenant: fragments.identifier, device_id: fragments.identifier },
});
