// Entry points for tests and the demo orchestrator.
export { DeviceBridgeModule } from './app.module.js';
export { loadDeviceBridgeConfig, type DeviceBridgeConfig } from './config.js';
export { DEVICE_BRIDGE_SCHEMA, deviceBridgeMigrations } from './persistence/migrations.js';
export { DeviceLinkHost } from './transport/device-link.host.js';
export { DeviceEventsRecorder } from './commands/device-events.recorder.js';
