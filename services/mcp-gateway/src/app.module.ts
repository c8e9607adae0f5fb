import { Module, type DynamicModule } from '@nestjs/common';
import { InfrastructureModule, type Infrastructure } from '@ormuz/service-kit';
import { CallRunner } from './sessions/call-runner.js';
import { MCP_GATEWAY_CONFIG, type McpGatewayConfig } from './config.js';
import { GatewayTools } from './sessions/gateway-tools.js';
import { McpSessions } from './sessions/mcp-sessions.js';
import { StatelessMcp } from './stateless/stateless-mcp.js';
import { McpController } from './transport/mcp.controller.js';
import { CallAppends } from './transport/call-appends.js';
import { GrantNoticesListener } from './transport/grant-notices.listener.js';
import { PolicyClient } from './transport/policy.client.js';

@Module({})
export class McpGatewayModule {
  static with(infra: Infrastructure, config: McpGatewayConfig): DynamicModule {
    return {
      module: McpGatewayModule,
      imports: [InfrastructureModule.forRoot(infra)],
      controllers: [McpController],
      providers: [
        { provide: MCP_GATEWAY_CONFIG, useValue: config },
        PolicyClient,
        CallRunner,
        CallAppends,
        GatewayTools,
        McpSessions,
        StatelessMcp,
        GrantNoticesListener,
      ],
    };
  }
}
