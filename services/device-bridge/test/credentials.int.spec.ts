/**
 * Device credentials kept in Postgres: issued tokens are stored only as hashes, rotation overlaps, revocation and
 * a rotation without grace close the connections that used the ended tokens, and bad requests get clear errors.
 */
import { createHash } from 'node:crypto';
import { sql } from 'kysely';
import type { RpcName, RpcRequestOf } from '@ormuz/contracts';
import { callRpc, callService, RemoteError } from '@ormuz/service-kit';
import { waitFor, adminFor } from '@ormuz/testing';
import { DEVICE_BRIDGE_SCHEMA, DeviceEventsRecorder } from '../src/index.js';
import { startBridge, type BridgeUnderTest } from './bridge.fixture.js';
import { RawDevice } from './raw-device.fixture.js';

const TENANT = 'acme';

describe('device credentials', () => {
  let bridge: BridgeUnderTest;
  const devices: RawDevice[] = [];

  beforeAll(async () => {
    bridge = await startBridge({ DEVICE_TOKENS: `${TENANT}:env-phone:env-secret` }, 'ormuz-credentials-');
  });
  afterEach(async () => {
    for (const d of devices.splice(0)) await d.close();
  });
  afterAll(() => bridge.close());

  const call = <N extends RpcName>(name: N, body: NoInfer<RpcRequestOf<N>>) =>
    adminFor(body).then((credential) =>
      callRpc(bridge.svc.infra.nc, bridge.namespace, name, body, { credential, checkReply: true }),
    );

  /** Connects and says hello; resolves once the bridge answered (welcome or a fatal error). */
  async function hello(deviceId: string, token: string): Promise<RawDevice> {
    const device = await RawDevice.connect(bridge.url);
    devices.push(device);
    device.hello(TENANT, deviceId, token);
    await waitFor(() => device.frame('welcome') ?? device.frame('error'), {
      message: `an answer to ${deviceId}'s hello`,
    });
    return device;
  }

  const welcomed = (d: RawDevice) => d.frame('welcome') !== undefined;
  const errorCode = (d: RawDevice) => d.frame('error')?.code;

  it('stores an issued token only as its SHA-256 and accepts it in a hello', async () => {
    const issued = await call('device-bridge.credentials.issue', { tenant: TENANT, device_id: 'phone-a' });
    expect(issued.token).toMatch(/^odt_[A-Za-z0-9_-]{43}$/);
    expect(issued.credential).toMatchObject({
      tenant: TENANT,
      device_id: 'phone-a',
      state: 'active',
      expires_at: null,
    });

    const rows = await sql<{ credential_id: string; token_sha256: Buffer; row_text: string }>`
      select credential_id, token_sha256, c::text as row_text
      from ${sql.table(`${DEVICE_BRIDGE_SCHEMA}.device_credentials`)} c where device_id = 'phone-a'`.execute(
      bridge.svc.infra.db,
    );
    expect(rows.rows).toHaveLength(1);
    expect(rows.rows[0]!.token_sha256.equals(createHash('sha256').update(issued.token).digest())).toBe(true);
    expect(rows.rows[0]!.row_text).not.toContain(issued.token);

    expect(welcomed(await hello('phone-a', issued.token))).toBe(true);
    // The token names its device: a hello claiming another device with it is refused as a mismatch, and closed.
    const impostor = await hello('phone-b', issued.token);
    expect(impostor.frame('error')).toMatchObject({ code: 'identity_mismatch', fatal: true });
    expect(impostor.frame('error')?.message).toContain('phone-a');
    await waitFor(() => impostor.closed, { message: 'the mismatched connection closed' });
    // A token nobody holds is still just unauthenticated, and a revoked one too.
    expect(errorCode(await hello('phone-b', 'odt_not-a-token'))).toBe('unauthenticated');
    await call('device-bridge.credentials.revoke', { tenant: TENANT, device_id: 'phone-a' });
    expect(errorCode(await hello('phone-b', issued.token))).toBe('unauthenticated');
  });

  it('keeps DEVICE_TOKENS entries as hashed credentials', async () => {
    const { credentials } = await call('device-bridge.credentials.list', { tenant: TENANT, device_id: 'env-phone' });
    expect(credentials).toEqual([expect.objectContaining({ device_id: 'env-phone', state: 'active' })]);
    expect(JSON.stringify(credentials)).not.toContain('env-secret');
    expect(welcomed(await hello('env-phone', 'env-secret'))).toBe(true);
  });

  it('announces the expiry of a token with a lifetime in the welcome', async () => {
    const issued = await call('device-bridge.credentials.issue', {
      tenant: TENANT,
      device_id: 'phone-ttl',
      ttl_seconds: 3600,
    });
    const device = await hello('phone-ttl', issued.token);
    expect(device.frame('welcome')?.token_expires_at).toBe(issued.credential.expires_at);
  });

  it('rotation overlaps: the old token works during the grace period, the new one at once', async () => {
    const first = await call('device-bridge.credentials.issue', { tenant: TENANT, device_id: 'phone-r' });
    const second = await call('device-bridge.credentials.rotate', {
      tenant: TENANT,
      device_id: 'phone-r',
      grace_seconds: 600,
    });
    expect(welcomed(await hello('phone-r', first.token))).toBe(true);
    expect(welcomed(await hello('phone-r', second.token))).toBe(true);
    const { credentials } = await call('device-bridge.credentials.list', { tenant: TENANT, device_id: 'phone-r' });
    const old = credentials.find((c) => c.credential_id === first.credential.credential_id)!;
    expect(old.state).toBe('active');
    expect(Date.parse(old.expires_at!)).toBeGreaterThan(Date.now() + 500_000);
  });

  it('rotation without grace ends the old token and closes the connection that used it', async () => {
    const first = await call('device-bridge.credentials.issue', { tenant: TENANT, device_id: 'phone-g' });
    const connected = await hello('phone-g', first.token);
    expect(welcomed(connected)).toBe(true);
    const second = await call('device-bridge.credentials.rotate', {
      tenant: TENANT,
      device_id: 'phone-g',
      grace_seconds: 0,
    });
    await waitFor(() => connected.closed, { message: 'the connection on the ended token closed' });
    expect(errorCode(connected)).toBe('credential_revoked');
    expect(errorCode(await hello('phone-g', first.token))).toBe('unauthenticated');
    expect(welcomed(await hello('phone-g', second.token))).toBe(true);
  });

  it('revocation refuses the token and closes its live connection; other devices stay connected', async () => {
    const a = await call('device-bridge.credentials.issue', { tenant: TENANT, device_id: 'phone-x' });
    const b = await call('device-bridge.credentials.issue', { tenant: TENANT, device_id: 'phone-y' });
    const x = await hello('phone-x', a.token);
    const y = await hello('phone-y', b.token);
    const { revoked } = await call('device-bridge.credentials.revoke', { tenant: TENANT, device_id: 'phone-x' });
    expect(revoked).toEqual([a.credential.credential_id]);
    await waitFor(() => x.closed, { message: 'the revoked connection closed' });
    expect(errorCode(x)).toBe('credential_revoked');
    expect(y.closed).toBe(false);
    expect(errorCode(await hello('phone-x', a.token))).toBe('unauthenticated');
    // The audit trail: issued, then revoked, on the device's subject of the devices stream; no token, no hash.
    const history = (await bridge.svc.app.get(DeviceEventsRecorder).history(TENANT, 'phone-x')).map((r) => r.event);
    expect(history.map((e) => [e.type, e.data])).toEqual([
      [
        'ormuz.device.credential_issued.v1',
        { device_id: 'phone-x', credential_id: a.credential.credential_id, via: 'issue', expires_at: null },
      ],
      [
        'ormuz.device.credentials_ended.v1',
        {
          device_id: 'phone-x',
          credential_ids: [a.credential.credential_id],
          reason: 'revoked',
          ends_at: expect.any(String),
        },
      ],
    ]);
    expect(JSON.stringify(history)).not.toContain(a.token);
    // Revoking again changes nothing and is not an error.
    expect(await call('device-bridge.credentials.revoke', { tenant: TENANT, device_id: 'phone-x' })).toEqual({
      revoked: [],
    });
  });

  it('closes a connection when its token expires', async () => {
    const issued = await call('device-bridge.credentials.issue', {
      tenant: TENANT,
      device_id: 'phone-e',
      ttl_seconds: 60,
    });
    // Make the stored expiry imminent, as if the minute had passed, then connect.
    const soon = new Date(Date.now() + 300);
    await sql`update ${sql.table(`${DEVICE_BRIDGE_SCHEMA}.device_credentials`)} set expires_at = ${soon}
              where credential_id = ${issued.credential.credential_id}`.execute(bridge.svc.infra.db);
    const device = await hello('phone-e', issued.token);
    expect(welcomed(device)).toBe(true);
    await waitFor(() => device.closed, { message: 'the connection closed at expiry' });
    expect(errorCode(device)).toBe('credential_expired');
    expect(errorCode(await hello('phone-e', issued.token))).toBe('unauthenticated');
  });

  it('refuses bad requests with a clear error', async () => {
    // Bodies the schema refuses: sent untyped, to see the refusal.
    const refusal = (name: string, body: unknown) =>
      adminFor(body)
        .then((credential) =>
          callService(bridge.svc.infra.nc, bridge.namespace, 'device-bridge', name, body, { credential }),
        )
        .then(
          () => undefined,
          (err: unknown) => err,
        );
    expect(await refusal('credentials.issue', { tenant: TENANT, device_id: 'phone.*' })).toMatchObject({
      code: 'schema_violation',
    });
    expect(await refusal('credentials.issue', { tenant: TENANT, device_id: 'p', ttl_seconds: 5 })).toMatchObject({
      code: 'schema_violation',
    });
    expect(await refusal('credentials.rotate', { tenant: TENANT, device_id: 'p', grace_seconds: -1 })).toMatchObject({
      code: 'schema_violation',
    });
    expect(await refusal('credentials.list', { tenant: 'a>b' })).toMatchObject({ code: 'schema_violation' });
    const missing = await refusal('credentials.revoke', {
      tenant: TENANT,
      device_id: 'phone-a',
      credential_id: 'cred-none',
    });
    expect(missing).toBeInstanceOf(RemoteError);
    expect(missing).toMatchObject({ code: 'credential_not_found' });
  });

  it('lists credentials per tenant only', async () => {
    await call('device-bridge.credentials.issue', { tenant: 'other', device_id: 'phone-a' });
    const { credentials } = await call('device-bridge.credentials.list', { tenant: 'other' });
    expect(credentials.map((c) => c.tenant)).toEqual(['other']);
    expect(JSON.stringify(credentials)).not.toMatch(/token|sha256/);
  });
});
