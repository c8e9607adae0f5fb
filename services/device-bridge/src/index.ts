// Entry points for tests, the demo orchestrator and the benchmarks (tools/benches).
export { deviceBridgeService } from './service.js';
export { DeviceBridgeModule } from './app.module.js';
export { loadDeviceBridgeConfig, type DeviceBridgeConfig } from './config.js';
export { DEVICE_BRIDGE_SCHEMA, deviceBridgeMigrations } from './persistence/migrations.js';
export { DeviceLinkHost } from './transport/device-link.host.js';
export { DeviceEventsRecorder } from './commands/device-events.recorder.js';
// The gateway alone, with its credential check, for bench:bridge's memory per connection.
export { DeviceGateway } from './transport/device-gateway.js';
export { DeviceCredentials } from './domain/device-credentials.js';
