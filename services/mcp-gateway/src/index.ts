// Entry points for tests and the demo orchestrator: start the MCP gateway in-process with a given configuration.
export { mcpGatewayService } from './service.js';
export { McpGatewayModule } from './app.module.js';
export { loadMcpGatewayConfig, type McpGatewayConfig } from './config.js';
