import { runServiceMain } from '@ormuz/service-kit';
import { loadModelLoopConfig } from './config.js';
import { modelLoopService } from './service.js';

await runServiceMain(modelLoopService(loadModelLoopConfig(process.env)));
