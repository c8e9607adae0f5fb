import type { Command } from 'commander';
import type { AsOfV1, ConversationViewV1 } from '@ormuz/contracts';
import { asOfOption } from '../as-of.js';
import { identifier, type CliContext } from '../context.js';
import { conversationLines, standingLines } from '../demo/conversation-print.js';

/** `ormuz conversation show`: a conversation from model-loop's read model (reading never acts). */
export function registerConversationCommands(program: Command, ctx: () => CliContext): void {
  const conversation = program.command('conversation').description("read an agent's conversations");

  conversation
    .command('show')
    .description('where a conversation stands, what it used, the bound that stopped it, and its messages')
    .requiredOption('--tenant <tenant>', 'tenant id', identifier('--tenant'))
    .requiredOption('--conversation <id>', 'conversation id', identifier('--conversation'))
    .option('--no-messages', 'leave the messages out')
    .option('--as-of <T>', 'as it stood then, folded from the log: an RFC 3339 time or a stream sequence', asOfOption())
    .action(async (o: { tenant: string; conversation: string; messages: boolean; asOf?: AsOfV1 }) => {
      const view = await ctx().call('model-loop.get', {
        tenant: o.tenant,
        conversation_id: o.conversation,
        ...(o.asOf ? { as_of: o.asOf } : {}),
      });
      ctx().print(view, (v: ConversationViewV1) =>
        [
          `conversation ${v.conversation_id}`,
          ...standingLines(v).map((l) => `  ${l}`),
          ...v.pending.map((p) => `  waiting for the owner: ${p.approval_id} — ${p.summary}`),
          ...(v.final_text !== null ? [`  final: ${v.final_text}`] : []),
          ...(o.messages ? ['', ...conversationLines(v.messages)] : []),
        ].join('\n'),
      );
    });
}
