import { runServiceMain } from '@ormuz/service-kit';
import { loadPolicyConfig } from './config.js';
import { policyService } from './service.js';

await runServiceMain(policyService(loadPolicyConfig(process.env)));
