import type { ServiceOptions } from '@ormuz/service-kit';
import { McpGatewayModule } from './app.module.js';
import type { McpGatewayConfig } from './config.js';

/**
 * How the MCP gateway is started, one declaration for `main.ts` and the tests. It writes no stream and keeps no table
 * of its own (sessions live in memory, calls on policy's log): an empty schema, so that it still checks the database
 * is its namespace's, where it reads the API keys policy migrates. It reads request bodies itself, to answer a
 * malformed one as JSON-RPC.
 */
export function mcpGatewayService(config: McpGatewayConfig): ServiceOptions {
  return {
    service: 'mcp-gateway',
    config,
    streams: [],
    schema: 'mcp_gateway',
    migrations: {},
    module: (infra) => McpGatewayModule.with(infra, config),
    httpPort: config.httpPort,
    httpHost: config.httpHost,
    httpJsonBodies: false,
  };
}
