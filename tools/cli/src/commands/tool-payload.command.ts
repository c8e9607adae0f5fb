/**
 * `ormuz tools payload`: what the first turn of a conversation costs an agent's model in tools and runtime
 * instructions, per tier, in that model's own tokens. The offered tools come from policy with the CLI's credential;
 * selection, rendering and counting are `@ormuz/tool-payload`'s, the same code model-loop sends requests with.
 */
import type { Command } from 'commander';
import type { OfferedToolsReplyV1 } from '@ormuz/contracts';
import { initialPayloads, tokenFamilyOf, type PayloadTokens } from '@ormuz/tool-payload';
import { CliInputError, identifier, type CliContext } from '../context.js';

/** The JSON `--json` prints. */
export interface ToolPayloadReport {
  readonly tenant: string;
  readonly agent_id: string;
  readonly model: string;
  readonly family: PayloadTokens['family'];
  /** False when the family's count is an estimate (o200k times a documented factor). */
  readonly exact: boolean;
  /** Whether tool names were counted encoded (`device__tap`), as every real provider API needs. */
  readonly encoded_names: boolean;
  readonly small: PayloadTokens;
  readonly large: PayloadTokens;
}

function model(value: string): string {
  if (!/^[a-z0-9][a-z0-9_-]*:\S+$/i.test(value)) {
    throw new CliInputError(
      `--model must be <provider>:<model>, e.g. openai:gpt-4o-mini, not ${JSON.stringify(value)}.`,
    );
  }
  return value;
}

/** The report for `offered` on `modelName`: both tiers of the first turn, before any message. */
export function toolPayloadReport(
  tenant: string,
  agentId: string,
  modelName: string,
  offered: OfferedToolsReplyV1['tools'],
): ToolPayloadReport {
  // Real APIs (OpenAI, Anthropic, OpenAI-compatible servers) forbid dots in function names; scripted models take them.
  const encodeToolNames = !modelName.startsWith('scripted:');
  const { small, large } = initialPayloads(offered, modelName, { encodeToolNames });
  return {
    tenant,
    agent_id: agentId,
    model: modelName,
    family: tokenFamilyOf(modelName),
    exact: small.exact,
    encoded_names: encodeToolNames,
    small,
    large,
  };
}

export function renderToolPayload(r: ToolPayloadReport): string {
  const tier = (name: string, p: PayloadTokens) => {
    const rows: [string, number, string][] = [
      ['instructions', p.instructions, ''],
      ['directory line', p.directory, ''],
      ['tools wrapper', p.toolsWrapper, ''],
      ...p.tools.map((t): [string, number, string] => [t.name, t.tokens, t.reason]),
    ];
    const width = Math.max(...rows.map(([label]) => label.length));
    return [
      `${name}  total ${p.total}  (${p.tools.length} full schema${p.tools.length === 1 ? '' : 's'})`,
      ...rows.map(([label, n, why]) => `  ${label.padEnd(width)}  ${String(n).padStart(5)}${why ? `  ${why}` : ''}`),
    ].join('\n');
  };
  return [
    `initial tool payload of ${r.tenant}/${r.agent_id} on ${r.model}: ${r.family} tokens` +
      (r.exact ? '' : ' (estimated: o200k times a factor, see docs/model-tokens.md)'),
    tier('small', r.small),
    tier('large', r.large),
  ].join('\n');
}

export function registerToolPayloadCommand(tools: Command, ctx: () => CliContext): void {
  tools
    .command('payload')
    .description(
      "tokens of an agent's first-turn tool payload (instructions, directory line, full schemas) per model tier",
    )
    .requiredOption('--tenant <tenant>', 'tenant id', identifier('--tenant'))
    .requiredOption('--agent <id>', 'agent id', identifier('--agent'))
    .requiredOption(
      '--model <provider:model>',
      'the model, e.g. openai:gpt-4o-mini or anthropic:claude-sonnet-4-5',
      model,
    )
    .action(async (o: { tenant: string; agent: string; model: string }) => {
      const reply = await ctx().call('policy.tools', { tenant: o.tenant, agent_id: o.agent });
      ctx().print(toolPayloadReport(o.tenant, o.agent, o.model, reply.tools), renderToolPayload);
    });
}
