import { runServiceMain } from '@ormuz/service-kit';
import { loadAuditConfig } from './config.js';
import { auditService } from './service.js';

await runServiceMain(auditService(loadAuditConfig(process.env)));
