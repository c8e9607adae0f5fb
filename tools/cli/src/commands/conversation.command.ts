import type { Command } from 'commander';
import type { ConversationViewV1 } from '@ormuz/contracts';
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
    .action(async (o: { tenant: string; conversation: string; messages: boolean }) => {
      const view = await ctx().call('model-loop.get', { tenant: o.tenant, conversation_id: o.conversation });
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
