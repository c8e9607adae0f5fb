import { runServiceMain } from '@ormuz/service-kit';
import { loadApprovalsConfig } from './config.js';
import { approvalsService } from './service.js';

await runServiceMain(approvalsService(loadApprovalsConfig(process.env)));
