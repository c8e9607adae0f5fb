/**
 * `ormuz`: the operator CLI. Every command accepts --json for one JSON value on stdout.
 */
import { Command } from 'commander';
import { isOrmuzError } from '@ormuz/contracts';
import { registerAgentRunCommand } from './commands/agent-run.command.js';
import { registerAnalyzeCommand } from './commands/analyze.command.js';
import { registerAgentsCommands } from './commands/agents.command.js';
import { registerApprovalCommands } from './commands/approvals.command.js';
import { registerAuditCommands } from './commands/audit.command.js';
import { registerAuthCommands } from './commands/auth.command.js';
import { registerCallCommands } from './commands/call.command.js';
import { registerCatalogCommands } from './commands/catalog.command.js';
import { registerConversationCommands } from './commands/conversation.command.js';
import { registerDemoCommand } from './commands/demo.command.js';
import { registerDeviceCommands } from './commands/device.command.js';
import { registerEventCommands } from './commands/events.command.js';
import { registerGrantCommands } from './commands/grants.command.js';
import { registerKeysCommands } from './commands/keys.command.js';
import { registerMcpCommand } from './commands/mcp.command.js';
import { registerMigrateCommand } from './commands/migrate.command.js';
import { registerProjectionCommands } from './commands/projections.command.js';
import { registerReplayCommand } from './commands/replay.command.js';
import { registerReportCommand } from './commands/report.command.js';
import { registerRiskCommands } from './commands/risk.command.js';
import { registerRiskAppCommands } from './commands/risk-apps.command.js';
import { registerTaintRuleCommands } from './commands/taint-rule.command.js';
import { registerTenantCommands } from './commands/tenant.command.js';
import { registerWebhookCommands } from './commands/webhooks.command.js';
import { registerWhatIfCommands } from './commands/whatif.command.js';
import { CliContext, type CliDefaults, type GlobalOptions } from './context.js';

const program = new Command('ormuz')
  .description('Operate Ormuz: submit and inspect tool calls, decide approvals, read the log, run the demo.')
  .option('--json', 'machine-readable output')
  .option('--nats <url>', 'NATS URL (default: $NATS_URL or nats://127.0.0.1:4222)')
  .option(
    '--namespace <ns>',
    'namespace of the platform (default: $ORMUZ_NAMESPACE, else ormuz; `ormuz demo` runs in demo)',
  )
  .option('--auth-token <token>', 'bearer token or API key to present (default: $ORMUZ_TOKEN)')
  .showHelpAfterError();

let context: CliContext | undefined;
const ctx = (defaults?: CliDefaults) => (context ??= new CliContext(program.opts<GlobalOptions>(), defaults));

registerCallCommands(program, ctx);
registerApprovalCommands(program, ctx);
registerEventCommands(program, ctx);
registerReplayCommand(program, ctx);
registerAnalyzeCommand(program, ctx);
registerReportCommand(program, ctx);
registerMigrateCommand(program, ctx);
registerDemoCommand(program, ctx);
registerConversationCommands(program, ctx);
registerDeviceCommands(program, ctx);
registerCatalogCommands(program, ctx);
registerRiskCommands(program, ctx);
registerRiskAppCommands(program, ctx);
registerTaintRuleCommands(program, ctx);
registerGrantCommands(program, ctx);
registerKeysCommands(program, ctx);
registerWebhookCommands(program, ctx);
registerWhatIfCommands(program, ctx);
registerAgentsCommands(program, ctx);
registerAgentRunCommand(program, ctx);
registerProjectionCommands(program, ctx);
registerAuthCommands(program, ctx);
registerAuditCommands(program, ctx);
registerTenantCommands(program, ctx);
registerMcpCommand(program);

try {
  await program.parseAsync(process.argv);
} catch (err) {
  const json = program.opts<GlobalOptions>().json;
  const code = isOrmuzError(err) ? err.code : 'error';
  const message = err instanceof Error ? err.message : String(err);
  if (json) process.stdout.write(`${JSON.stringify({ error: { code, message } })}\n`);
  else process.stderr.write(`ormuz: ${message}\n`);
  process.exitCode = process.exitCode || 1;
} finally {
  await context?.close();
}
