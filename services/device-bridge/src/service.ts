import type { ServiceOptions } from '@ormuz/service-kit';
import { DeviceBridgeModule } from './app.module.js';
import type { DeviceBridgeConfig } from './config.js';
import { DEVICE_BRIDGE_SCHEMA, deviceBridgeMigrations } from './persistence/migrations.js';

/** How the bridge is started, one declaration for `main.ts`, the tests and the benches: its streams, schema and module. */
export function deviceBridgeService(config: DeviceBridgeConfig): ServiceOptions {
  return {
    service: 'device-bridge',
    config,
    streams: ['calls', 'devices'],
    schema: DEVICE_BRIDGE_SCHEMA,
    migrations: deviceBridgeMigrations,
    module: (infra) => DeviceBridgeModule.with(infra, config),
  };
}
