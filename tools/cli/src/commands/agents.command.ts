import type { Command } from 'commander';
import type { AgentModelListV1, AgentModelV1, ModelSettingsV1 } from '@ormuz/contracts';
import { CliInputError, identifier, type CliContext } from '../context.js';

/** The model options `agents set` and `agent run` share. */
export interface ModelSettingsOptions {
  readonly baseUrl?: string;
  readonly apiKeyEnv?: string;
  readonly apiKeyFile?: string;
  readonly maxOutputTokens?: number;
  readonly stream?: boolean;
}

/** Adds the options that say where a model is reached. */
export function withModelSettingsOptions(command: Command): Command {
  return command
    .option('--base-url <url>', "the API's base URL, http or https (e.g. http://127.0.0.1:8080/v1)")
    .option('--api-key-env <name>', "name of model-loop's environment variable holding the key ('' sends none)")
    .option('--api-key-file <path>', 'absolute path of a file model-loop reads the key from (a mounted secret)')
    .option('--max-output-tokens <n>', 'output token bound of one model turn', wholeNumber('--max-output-tokens'))
    .option('--stream', 'stream replies over SSE');
}

/** The settings the options give, or undefined when they give none. */
export function modelSettingsOf(o: ModelSettingsOptions): ModelSettingsV1 | undefined {
  const settings: ModelSettingsV1 = {
    ...(o.baseUrl !== undefined ? { base_url: o.baseUrl } : {}),
    ...(o.apiKeyEnv !== undefined ? { api_key_env: o.apiKeyEnv } : {}),
    ...(o.apiKeyFile !== undefined ? { api_key_file: o.apiKeyFile } : {}),
    ...(o.maxOutputTokens !== undefined ? { max_output_tokens: o.maxOutputTokens } : {}),
    ...(o.stream ? { stream: true } : {}),
  };
  return Object.keys(settings).length > 0 ? settings : undefined;
}

function wholeNumber(option: string): (value: string) => number {
  return (value) => {
    const n = Number(value);
    if (!Number.isInteger(n) || n < 1 || n > 1_000_000) {
      throw new CliInputError(`${option} must be a whole number from 1 to 1,000,000, not ${value}.`);
    }
    return n;
  };
}

/** One agent's configuration as lines; never a key, only where model-loop reads it. */
export function renderAgentModel(a: AgentModelV1): string {
  const s = a.settings;
  const key =
    s.api_key_file !== undefined
      ? `read from file ${s.api_key_file}`
      : s.api_key_env !== undefined
        ? s.api_key_env === ''
          ? 'none sent'
          : `read from $${s.api_key_env}`
        : "the provider's configured variable";
  return [
    `agent ${a.tenant}/${a.agent_id}: ${a.model}`,
    `  base url:          ${s.base_url ?? "the provider's configured one"}`,
    `  api key:           ${key}`,
    `  max output tokens: ${s.max_output_tokens ?? 'configured default'}`,
    `  stream:            ${s.stream === undefined ? 'configured default' : String(s.stream)}`,
    `  set by ${a.updated_by} at ${a.updated_at}`,
  ].join('\n');
}

export function renderAgentModels(list: AgentModelListV1): string {
  if (list.agents.length === 0) return 'no agent has a model configured (conversations must name one)';
  const width = Math.max(...list.agents.map((a) => a.agent_id.length));
  return list.agents
    .map((a) => `${a.agent_id.padEnd(width)}  ${a.model}${a.settings.base_url ? `  at ${a.settings.base_url}` : ''}`)
    .join('\n');
}

export function registerAgentsCommands(program: Command, ctx: () => CliContext): void {
  const agents = program
    .command('agents')
    .description("each agent's model and where it is reached (model-loop); never a key, only where it is read");

  withModelSettingsOptions(
    agents
      .command('set')
      .description("replace an agent's model configuration; conversations started without a model use it")
      .requiredOption('--tenant <tenant>', 'tenant id', identifier('--tenant'))
      .requiredOption('--agent <id>', 'agent id', identifier('--agent'))
      .requiredOption(
        '--model <provider:model>',
        'e.g. openai:gpt-4.1, openai-compatible:qwen3, anthropic:claude-sonnet-4-5',
      ),
  ).action(async (o: { tenant: string; agent: string; model: string } & ModelSettingsOptions) => {
    const settings = modelSettingsOf(o);
    const reply = await ctx().call('model-loop.agents.set', {
      tenant: o.tenant,
      agent_id: o.agent,
      model: o.model,
      ...(settings ? { settings } : {}),
    });
    ctx().print(reply, (a: AgentModelV1) => `saved\n${renderAgentModel(a)}`);
  });

  agents
    .command('show')
    .description("show an agent's model configuration")
    .requiredOption('--tenant <tenant>', 'tenant id', identifier('--tenant'))
    .requiredOption('--agent <id>', 'agent id', identifier('--agent'))
    .action(async (o: { tenant: string; agent: string }) => {
      const reply = await ctx().call('model-loop.agents.get', { tenant: o.tenant, agent_id: o.agent });
      ctx().print(reply, renderAgentModel);
    });

  agents
    .command('list')
    .description('list the agents of a tenant that have a model configured')
    .requiredOption('--tenant <tenant>', 'tenant id', identifier('--tenant'))
    .action(async (o: { tenant: string }) => {
      const reply = await ctx().call('model-loop.agents.list', { tenant: o.tenant });
      ctx().print(reply, renderAgentModels);
    });
}
