import type { ColumnType } from 'kysely';
import type { PendingConfirmationV1, RequestedToolCallV1, ToolResultProvenanceV1 } from '@ormuz/contracts';

/** Tables of the `model_loop` schema that hold the conversation read model. jsonb columns are written as JSON text. */
export interface ConversationViewDB {
  conversations: {
    tenant: string;
    conversation_id: string;
    agent_id: string;
    model: string;
    device_id: string | null;
    status: string;
    pending: PendingConfirmationV1[] | string;
    final_text: string | null;
    completion_reason: string | null;
    turns: number;
    last_seq: number;
    started_at: Date;
    updated_at: Date;
  };
  conversation_messages: {
    tenant: string;
    conversation_id: string;
    seq: number;
    /** The event's place in its log message (0 for a message of one event). */
    idx: ColumnType<number, number | undefined, number>;
    turn: number;
    role: string;
    content: string;
    tool_calls: RequestedToolCallV1[] | string | null;
    tool_call_id: string | null;
    provenance: ToolResultProvenanceV1 | string | null;
    added_at: Date;
  };
}
