import type { Command } from 'commander';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  OrmuzError,
  type ConnectedDevicesV1,
  type CredentialListV1,
  type DeviceCredentialViewV1,
  type IssuedCredentialV1,
  type RevokedCredentialsV1,
  type WireErrorV1,
} from '@ormuz/contracts';
import type { SimulatedDeviceHandle } from '@ormuz/device-sdk';
import { CliInputError, identifier, type CliContext } from '../context.js';

/** `device simulate` was refused by the bridge for its credential: final, no retry can succeed with the same token. */
class DeviceCredentialRefusedError extends OrmuzError {
  readonly code = 'credential_refused';
}

const credentialLine = (c: DeviceCredentialViewV1) =>
  `${c.credential_id}  ${c.state.padEnd(7)}  ${c.tenant}/${c.device_id}  created ${c.created_at}` +
  (c.revoked_at ? `  revoked ${c.revoked_at}` : c.expires_at ? `  expires ${c.expires_at}` : '  no expiry');

const issuedText = (r: IssuedCredentialV1) =>
  `${credentialLine(r.credential)}
token (shown once; only its hash is kept): ${r.token}`;

/** A whole number of seconds within the bounds the bridge accepts. */
function seconds(option: string, min: number): (value: string) => number {
  return (value) => {
    const n = Number(value);
    if (!Number.isInteger(n) || n < min || n > 366 * 24 * 3600) {
      throw new CliInputError(
        `${option} must be a whole number of seconds from ${min} to ${366 * 24 * 3600}, not ${value}.`,
      );
    }
    return n;
  };
}

export function registerDeviceCommands(program: Command, ctx: () => CliContext): void {
  const device = program.command('device').description('devices: connected ones, their credentials, a simulated phone');

  device
    .command('list')
    .description("the tenant's devices connected to any bridge replica")
    .requiredOption('--tenant <tenant>', 'tenant id', identifier('--tenant'))
    .action(async (o: { tenant: string }) => {
      const reply = await ctx().call('device-bridge.devices', { tenant: o.tenant });
      ctx().print(reply, (r: ConnectedDevicesV1) =>
        r.devices.length === 0
          ? 'no devices connected'
          : r.devices
              .map((d) => `${d.device_id}  boot ${d.boot_id}  since ${d.connected_at}  on ${d.replica}`)
              .join('\n'),
      );
    });

  const credentials = device
    .command('credentials')
    .description('device tokens: issue, rotate, revoke, list (only hashes are stored)');
  /** issue and rotate: a new token for a device, its lifetime, and what else the command takes. */
  const newToken = (name: 'issue' | 'rotate', description: string, extra: (cmd: Command) => Command = (cmd) => cmd) =>
    extra(
      credentials
        .command(name)
        .description(description)
        .requiredOption('--tenant <tenant>', 'tenant id', identifier('--tenant'))
        .requiredOption('--device <id>', 'device id', identifier('--device'))
        .option('--ttl <seconds>', 'lifetime of the new token (default: until revoked)', seconds('--ttl', 60)),
    ).action(async (o: { tenant: string; device: string; ttl?: number; grace?: number }) => {
      const reply = await ctx().call(`device-bridge.credentials.${name}`, {
        tenant: o.tenant,
        device_id: o.device,
        ...(o.ttl ? { ttl_seconds: o.ttl } : {}),
        ...(o.grace !== undefined ? { grace_seconds: o.grace } : {}),
      });
      ctx().print(reply, issuedText);
    });
  newToken('issue', 'a new token for a device, beside any it has');
  newToken('rotate', "a new token; the device's other tokens end after the grace period", (cmd) =>
    cmd.option(
      '--grace <seconds>',
      'how long the old tokens keep working (default 3600; 0 ends them and their connections now)',
      seconds('--grace', 0),
    ),
  );
  credentials
    .command('revoke')
    .description('revoke one credential, or all of the device; connections that used them are closed')
    .requiredOption('--tenant <tenant>', 'tenant id', identifier('--tenant'))
    .requiredOption('--device <id>', 'device id', identifier('--device'))
    .option('--credential <id>', 'the credential to revoke (default: all of the device)', identifier('--credential'))
    .action(async (o: { tenant: string; device: string; credential?: string }) => {
      const reply = await ctx().call('device-bridge.credentials.revoke', {
        tenant: o.tenant,
        device_id: o.device,
        ...(o.credential ? { credential_id: o.credential } : {}),
      });
      ctx().print(reply, (r: RevokedCredentialsV1) =>
        r.revoked.length === 0 ? 'nothing to revoke' : `revoked ${r.revoked.join(', ')}`,
      );
    });
  credentials
    .command('list')
    .requiredOption('--tenant <tenant>', 'tenant id', identifier('--tenant'))
    .option('--device <id>', 'one device only', identifier('--device'))
    .action(async (o: { tenant: string; device?: string }) => {
      const reply = await ctx().call('device-bridge.credentials.list', {
        tenant: o.tenant,
        ...(o.device ? { device_id: o.device } : {}),
      });
      ctx().print(reply, (r: CredentialListV1) =>
        r.credentials.length === 0 ? 'no credentials' : r.credentials.map(credentialLine).join('\n'),
      );
    });

  device
    .command('simulate')
    .description('connect one simulated Android phone to a bridge and serve its calls until Ctrl-C')
    .requiredOption('--url <ws-url>', 'bridge URL, e.g. ws://127.0.0.1:8082/v1/devices')
    .requiredOption('--tenant <tenant>', 'tenant the device belongs to')
    .requiredOption('--device <id>', 'device id')
    .requiredOption('--token <token>', 'device credential')
    .option('--journal <dir>', 'journal directory (kept across restarts)')
    .action(async (o: { url: string; tenant: string; device: string; token: string; journal?: string }) => {
      let serving: NodeJS.Timeout | undefined;
      let handle: SimulatedDeviceHandle | undefined;
      // The simulated device loads here, not with every CLI command.
      const { runSimulatedDevice } = await import('@ormuz/device-sdk');
      // Ends on Ctrl-C (undefined) or on the bridge's refusal of the credential, which no retry can change.
      const refusal = await new Promise<WireErrorV1 | undefined>((resolve) => {
        process.once('SIGINT', () => resolve(undefined));
        handle = runSimulatedDevice({
          url: o.url,
          tenant: o.tenant,
          deviceId: o.device,
          token: o.token,
          journalDir: o.journal ?? mkdtempSync(join(tmpdir(), `ormuz-device-${o.device}-`)),
          onAuthenticationRefused: resolve,
        });
        process.stdout.write(`simulated device ${o.device} connecting to ${o.url}; Ctrl-C to stop\n`);
        serving = setInterval(() => {
          if (!handle?.client.connected) return;
          clearInterval(serving);
          process.stdout.write(`simulated device ${o.tenant}/${o.device} serving ${o.url}\n`);
        }, 100);
      });
      clearInterval(serving);
      await handle?.close();
      if (refusal) {
        throw new DeviceCredentialRefusedError(
          `The bridge refused the credential of device ${o.tenant}/${o.device} (${refusal.code}): ${refusal.message} ` +
            `Check --token, --tenant and --device; an operator issues a token with ` +
            `\`ormuz device credentials issue --tenant ${o.tenant} --device ${o.device}\`.`,
        );
      }
    });
}
