import { runServiceMain } from '@ormuz/service-kit';
import { loadMcpGatewayConfig } from './config.js';
import { mcpGatewayService } from './service.js';

await runServiceMain(mcpGatewayService(loadMcpGatewayConfig(process.env)));
