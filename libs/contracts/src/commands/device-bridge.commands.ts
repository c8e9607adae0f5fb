/**
 * Wire contracts of the device-bridge service (`<namespace>.cmd.device-bridge.<name>`): connected devices and device
 * credentials. A token leaves the bridge exactly once, in the answer to `credentials.issue` or `credentials.rotate`;
 * the bridge keeps only its SHA-256.
 */
import { registerSchema } from '../schema-registry.js';
import { fragments, List, Nullable, Struct, Type, type Static } from '../wire.js';

/** Longest credential lifetime and rotation overlap: one year. */
const MAX_SECONDS = 366 * 24 * 3600;

/** `devices`: the tenant's devices connected to the replica that answers. */
export const ListDevicesRequestV1 = Struct({ tenant: fragments.identifier });
export type ListDevicesRequestV1 = Static<typeof ListDevicesRequestV1>;

/** A device connected to a replica of the bridge. */
export const ConnectedDeviceV1 = Struct({
  device_id: Type.String(),
  boot_id: Type.String(),
  session_id: Type.String(),
  /** RFC 3339. */
  connected_at: Type.String(),
  /** The bridge replica that holds the connection. */
  replica: Type.String(),
});
export type ConnectedDeviceV1 = Static<typeof ConnectedDeviceV1>;

/** `devices`'s answer, by device id. */
export const ConnectedDevicesV1 = Struct({ devices: List(ConnectedDeviceV1) });
export type ConnectedDevicesV1 = Static<typeof ConnectedDevicesV1>;

/** A credential as operators see it: never the token, never its hash. */
export const DeviceCredentialViewV1 = Struct({
  credential_id: Type.String(),
  tenant: Type.String(),
  device_id: Type.String(),
  created_at: Type.String(),
  /** Null: valid until revoked. */
  expires_at: Nullable(Type.String()),
  revoked_at: Nullable(Type.String()),
  /** `active`, `expired` or `revoked`, as of the answer. */
  state: Type.Enum(['active', 'expired', 'revoked']),
});
export type DeviceCredentialViewV1 = Static<typeof DeviceCredentialViewV1>;

/** A device of a tenant, and a token lifetime: what issue and rotate share. */
const newTokenFields = {
  tenant: fragments.identifier,
  device_id: fragments.identifier,
  /** Lifetime in seconds; absent: valid until revoked. */
  ttl_seconds: Type.Optional(Type.Integer({ minimum: 60, maximum: MAX_SECONDS })),
};

/** `credentials.issue`: a new token for a device, beside any it already has. */
export const IssueCredentialRequestV1 = Struct(newTokenFields);
export type IssueCredentialRequestV1 = Static<typeof IssueCredentialRequestV1>;

/**
 * `credentials.rotate`: a new token, and the device's other active tokens end after `grace_seconds` (default 3600;
 * 0 ends them now and disconnects the connections that used them).
 */
export const RotateCredentialRequestV1 = Struct({
  ...newTokenFields,
  grace_seconds: Type.Optional(Type.Integer({ minimum: 0, maximum: MAX_SECONDS })),
});
export type RotateCredentialRequestV1 = Static<typeof RotateCredentialRequestV1>;

/** Answer to issue and rotate: the only time the token is shown. */
export const IssuedCredentialV1 = Struct({ credential: DeviceCredentialViewV1, token: Type.String() });
export type IssuedCredentialV1 = Static<typeof IssuedCredentialV1>;

/** `credentials.revoke`: one credential, or every credential of the device when `credential_id` is absent. */
export const RevokeCredentialRequestV1 = Struct({
  tenant: fragments.identifier,
  device_id: fragments.identifier,
  credential_id: Type.Optional(fragments.identifier),
});
export type RevokeCredentialRequestV1 = Static<typeof RevokeCredentialRequestV1>;

/** `credentials.revoke`'s answer: the credentials it ended (none when there was nothing to revoke). */
export const RevokedCredentialsV1 = Struct({ revoked: List(Type.String()) });
export type RevokedCredentialsV1 = Static<typeof RevokedCredentialsV1>;

/** `credentials.list` */
export const ListCredentialsRequestV1 = Struct({
  tenant: fragments.identifier,
  device_id: Type.Optional(fragments.identifier),
});
export type ListCredentialsRequestV1 = Static<typeof ListCredentialsRequestV1>;

/** `credentials.list`'s answer. */
export const CredentialListV1 = Struct({ credentials: List(DeviceCredentialViewV1) });
export type CredentialListV1 = Static<typeof CredentialListV1>;

export const DEVICE_BRIDGE_DEVICES_V1 = 'device-bridge.devices.v1';
export const DEVICE_CREDENTIALS_ISSUE_V1 = 'device-bridge.credentials.issue.v1';
export const DEVICE_CREDENTIALS_ROTATE_V1 = 'device-bridge.credentials.rotate.v1';
export const DEVICE_CREDENTIALS_REVOKE_V1 = 'device-bridge.credentials.revoke.v1';
export const DEVICE_CREDENTIALS_LIST_V1 = 'device-bridge.credentials.list.v1';

registerSchema(DEVICE_BRIDGE_DEVICES_V1, ListDevicesRequestV1);
registerSchema(DEVICE_CREDENTIALS_ISSUE_V1, IssueCredentialRequestV1);
registerSchema(DEVICE_CREDENTIALS_ROTATE_V1, RotateCredentialRequestV1);
registerSchema(DEVICE_CREDENTIALS_REVOKE_V1, RevokeCredentialRequestV1);
registerSchema(DEVICE_CREDENTIALS_LIST_V1, ListCredentialsRequestV1);
