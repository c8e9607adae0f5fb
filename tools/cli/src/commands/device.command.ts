import type { Command } from 'commander';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runSimulatedDevice } from '@ormuz/device-sdk';
import type { CliContext } from '../context.js';

export function registerDeviceCommands(program: Command, _ctx: () => CliContext): void {
  const device = program.command('device').description('device-side tools');
  device
    .command('simulate')
    .description('connect one simulated Android phone to a bridge and serve its calls until Ctrl-C')
    .requiredOption('--url <ws-url>', 'bridge URL, e.g. ws://127.0.0.1:8082/v1/devices')
    .requiredOption('--tenant <tenant>', 'tenant the device belongs to')
    .requiredOption('--device <id>', 'device id')
    .requiredOption('--token <token>', 'device credential')
    .option('--journal <dir>', 'journal directory (kept across restarts)')
    .action(async (o: { url: string; tenant: string; device: string; token: string; journal?: string }) => {
      const handle = runSimulatedDevice({
        url: o.url,
        tenant: o.tenant,
        deviceId: o.device,
        token: o.token,
        journalDir: o.journal ?? mkdtempSync(join(tmpdir(), `ormuz-device-${o.device}-`)),
      });
      process.stdout.write(`simulated device ${o.device} serving ${o.url}; Ctrl-C to stop\n`);
      await new Promise<void>((resolve) => process.once('SIGINT', () => resolve()));
      await handle.close();
    });
}
