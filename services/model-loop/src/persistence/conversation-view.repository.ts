import { Inject, Injectable } from '@nestjs/common';
import type { Kysely } from 'kysely';
import type {
  BoundReachedV1,
  CompletionReasonV1,
  ConversationMessageViewV1,
  ConversationStatusV1,
  ConversationViewV1,
  PendingConfirmationV1,
  RequestedToolCallV1,
  ToolResultProvenanceV1,
} from '@ormuz/contracts';
import { INFRA, type Infrastructure } from '@ormuz/service-kit';
import type { ConversationViewDB } from './conversation-view.tables.js';
import { MODEL_LOOP_SCHEMA } from './migrations.js';

/** Reads the conversation read model. */
@Injectable()
export class ConversationViewRepository {
  private readonly db: Kysely<ConversationViewDB>;

  constructor(@Inject(INFRA) infra: Infrastructure) {
    this.db = (infra.db as Kysely<ConversationViewDB>).withSchema(MODEL_LOOP_SCHEMA);
  }

  /**
   * The conversation with its messages in log order, or undefined when the read model has no such conversation.
   * Both tables are read in one snapshot, so the status, the pending list and the messages always agree.
   */
  async find(tenant: string, conversationId: string): Promise<ConversationViewV1 | undefined> {
    const read = await this.db
      .transaction()
      .setIsolationLevel('repeatable read')
      .setAccessMode('read only')
      .execute(async (trx) => {
        const row = await trx
          .selectFrom('conversations')
          .selectAll()
          .where('tenant', '=', tenant)
          .where('conversation_id', '=', conversationId)
          .executeTakeFirst();
        if (!row) return undefined;
        const rows = await trx
          .selectFrom('conversation_messages')
          .selectAll()
          .where('tenant', '=', tenant)
          .where('conversation_id', '=', conversationId)
          .orderBy('seq')
          .orderBy('idx')
          .execute();
        return { row, rows };
      });
    if (!read) return undefined;
    const { row, rows } = read;
    const messages = rows.map((m): ConversationMessageViewV1 => ({
      turn: m.turn,
      role: m.role as ConversationMessageViewV1['role'],
      content: m.content,
      ...(m.tool_calls ? { tool_calls: m.tool_calls as RequestedToolCallV1[] } : {}),
      ...(m.tool_call_id ? { tool_call_id: m.tool_call_id } : {}),
      ...(m.provenance ? { provenance: m.provenance as ToolResultProvenanceV1 } : {}),
    }));
    return {
      conversation_id: row.conversation_id,
      status: row.status as ConversationStatusV1,
      messages,
      pending: row.pending as PendingConfirmationV1[],
      final_text: row.final_text,
      completion_reason: row.completion_reason as CompletionReasonV1 | null,
      bound: row.bound as BoundReachedV1 | null,
      usage: {
        steps: row.turns,
        tool_calls: row.tool_calls_used,
        tokens: Number(row.tokens_used),
        cost_usd: row.cost_usd,
      },
    };
  }
}
