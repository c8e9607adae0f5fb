import { runServiceMain } from '@ormuz/service-kit';
import { DeviceBridgeModule } from './app.module.js';
import { loadDeviceBridgeConfig } from './config.js';
import { DEVICE_BRIDGE_SCHEMA, deviceBridgeMigrations } from './persistence/migrations.js';

const config = loadDeviceBridgeConfig(process.env);
await runServiceMain({
  service: 'device-bridge',
  config,
  streams: ['calls', 'devices'],
  schema: DEVICE_BRIDGE_SCHEMA,
  migrations: deviceBridgeMigrations,
  module: (infra) => DeviceBridgeModule.with(infra, config),
});
