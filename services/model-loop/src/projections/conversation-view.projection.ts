import { sql, type Transaction, type UpdateObject } from 'kysely';
import {
  contextFilter,
  ConversationEventType as E,
  isConversationEvent,
  type ConversationEventDraft,
  type PendingConfirmationV1,
} from '@ormuz/contracts';
import { streamName, type AfterCommit, type Enveloped, type Projection } from '@ormuz/event-log';
import type { ConversationViewDB } from '../persistence/conversation-view.tables.js';
import { MODEL_LOOP_SCHEMA } from '../persistence/migrations.js';

type Trx = Transaction<ConversationViewDB>;

/**
 * Builds `model_loop.conversations` and `model_loop.conversation_messages` from the conversations stream: where each
 * conversation stands, the approvals it waits on (listed from the moment a call is staged) and every message.
 */
export function conversationViewProjection(namespace: string): Projection<ConversationViewDB, ConversationEventDraft> {
  return {
    name: 'model_loop_conversation_view',
    schema: MODEL_LOOP_SCHEMA,
    tables: [{ name: 'conversations' }, { name: 'conversation_messages' }],
    stream: streamName(namespace, 'conversations'),
    filterSubject: contextFilter(namespace, 'conversations'),
    accepts: isConversationEvent,
    async apply(trx: Trx, e: Enveloped<ConversationEventDraft>, seq: number, _after: AfterCommit, index: number) {
      const t = trx.withSchema(MODEL_LOOP_SCHEMA);
      const tenant = e.tenant;
      const conversationId = e.subject;
      const time = new Date(e.time);
      const update = (set: UpdateObject<ConversationViewDB, 'conversations'>) =>
        t
          .updateTable('conversations')
          .set({ ...set, last_seq: seq, updated_at: time })
          .where('tenant', '=', tenant)
          .where('conversation_id', '=', conversationId)
          // `<=`: a decision's events share their message's sequence (a start and its task message); the
          // checkpoint, moved in the same transaction, keeps a message from being applied twice.
          .where('last_seq', '<=', seq)
          .execute();
      switch (e.type) {
        case E.Started:
          await t
            .insertInto('conversations')
            .values({
              tenant,
              conversation_id: conversationId,
              agent_id: e.data.agent_id,
              model: e.data.model,
              device_id: e.data.device_id,
              status: 'running',
              pending: '[]',
              final_text: null,
              completion_reason: null,
              turns: 0,
              price: e.data.price ? JSON.stringify(e.data.price) : null,
              cost_usd: e.data.price ? 0 : null,
              bound: null,
              last_seq: seq,
              started_at: time,
              updated_at: time,
            })
            .onConflict((oc) => oc.columns(['tenant', 'conversation_id']).doNothing())
            .execute();
          return;
        case E.MessageAdded: {
          const m = e.data.message;
          // Keyed by the log message's sequence and the event's index in it: one decision may add several messages.
          // A message applied again (a replay over kept rows) inserts nothing.
          await t
            .insertInto('conversation_messages')
            .values({
              tenant,
              conversation_id: conversationId,
              seq,
              idx: index,
              turn: e.data.turn,
              role: m.role,
              content: m.content,
              tool_calls: m.tool_calls ? JSON.stringify(m.tool_calls) : null,
              tool_call_id: m.tool_call_id ?? null,
              provenance: m.provenance ? JSON.stringify(m.provenance) : null,
              added_at: time,
            })
            .onConflict((oc) => oc.columns(['tenant', 'conversation_id', 'seq', 'idx']).doNothing())
            .execute();
          if (m.role === 'assistant') {
            const u = e.data.usage ?? { input_tokens: 0, output_tokens: 0 };
            // Priced in SQL with the price the start recorded, in the order the decider's costOf sums it.
            await update({
              turns: e.data.turn + 1,
              tool_calls_used: sql<number>`tool_calls_used + ${m.tool_calls?.length ?? 0}`,
              tokens_used: sql<number>`tokens_used + ${u.input_tokens + u.output_tokens}`,
              cost_usd: sql<number>`cost_usd + (${u.input_tokens}::float8 * (price->>'input_usd_per_mtok')::float8 + ${u.output_tokens}::float8 * (price->>'output_usd_per_mtok')::float8) / 1000000`,
            });
          } else if (m.role === 'tool' && m.provenance) {
            const p = m.provenance;
            const pending = (await currentPending(t, tenant, conversationId)).filter((c) => c.call_id !== p.call_id);
            if (p.approval) pending.push({ call_id: p.call_id, ...p.approval });
            await update({ pending: JSON.stringify(pending) });
          } else {
            await update({});
          }
          return;
        }
        case E.Paused:
          await update({ status: 'paused', pending: JSON.stringify(e.data.pending) });
          return;
        case E.Resumed:
          await update({ status: 'running' });
          return;
        case E.Completed:
          await update({
            status: 'completed',
            final_text: e.data.final_text,
            completion_reason: e.data.reason,
            bound: e.data.bound ? JSON.stringify(e.data.bound) : null,
          });
          return;
        case E.ToolActivated:
          // The view does not list activations (the model's requests do); the row only advances past the event.
          await update({});
          return;
        default:
          return assertNever(e);
      }
    },
    async reset(trx: Trx) {
      await trx.withSchema(MODEL_LOOP_SCHEMA).deleteFrom('conversation_messages').execute();
      await trx.withSchema(MODEL_LOOP_SCHEMA).deleteFrom('conversations').execute();
    },
  };
}

async function currentPending(
  t: ReturnType<Trx['withSchema']>,
  tenant: string,
  conversationId: string,
): Promise<PendingConfirmationV1[]> {
  const row = await t
    .selectFrom('conversations')
    .select('pending')
    .where('tenant', '=', tenant)
    .where('conversation_id', '=', conversationId)
    .executeTakeFirst();
  return row ? [...(row.pending as PendingConfirmationV1[])] : [];
}

function assertNever(value: never): never {
  throw new Error(`unhandled conversation event ${JSON.stringify(value)}`);
}
