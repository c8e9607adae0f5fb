import { runServiceMain } from '@ormuz/service-kit';
import { loadDeviceBridgeConfig } from './config.js';
import { deviceBridgeService } from './service.js';

await runServiceMain(deviceBridgeService(loadDeviceBridgeConfig(process.env)));
