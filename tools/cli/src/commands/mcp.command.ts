import type { Command } from 'commander';
import { CliInputError } from '../context.js';

const DEFAULT_URL = 'http://127.0.0.1:8083/mcp';

/**
 * `ormuz mcp --key <api key> [--url <gateway>] [--device <id>]`: serve the agent's governed tools on stdio, for an MCP
 * client that starts local servers (its config names `npx ormuz mcp --key …`). Nothing but the protocol goes to
 * stdout; problems go to stderr.
 */
export function registerMcpCommand(program: Command): void {
  program
    .command('mcp')
    .description("serve an agent's governed tools to a local MCP client on stdio, relayed to the MCP gateway")
    .option('--key <api key>', "the agent's API key (default: $ORMUZ_API_KEY)")
    .option('--url <url>', `the MCP gateway's endpoint (default: $ORMUZ_MCP_URL or ${DEFAULT_URL})`)
    .option('--device <id>', 'the device the session acts on (Ormuz-Device)')
    .action(async (opts: { key?: string; url?: string; device?: string }) => {
      const apiKey = opts.key ?? process.env.ORMUZ_API_KEY;
      if (!apiKey) throw new CliInputError('ormuz mcp needs an agent API key: --key ormz_… or $ORMUZ_API_KEY.');
      const raw = opts.url ?? process.env.ORMUZ_MCP_URL ?? DEFAULT_URL;
      let url: URL;
      try {
        url = new URL(raw);
      } catch {
        throw new CliInputError(`--url ${raw} is not a URL; give the gateway's endpoint, e.g. ${DEFAULT_URL}.`);
      }
      // Imported here, not at the top: the MCP SDK (and zod under it) loads only for the one command that uses it.
      const { runStdioRelay } = await import('../mcp/stdio-relay.js');
      await runStdioRelay({
        url,
        apiKey,
        ...(opts.device ? { device: opts.device } : {}),
        log: (line) => process.stderr.write(`${line}\n`),
      });
    });
}
