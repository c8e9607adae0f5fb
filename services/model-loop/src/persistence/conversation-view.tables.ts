import type { ColumnType } from 'kysely';
import type {
  BoundReachedV1,
  ModelPriceV1,
  PendingConfirmationV1,
  RequestedToolCallV1,
  ToolResultProvenanceV1,
} from '@ormuz/contracts';

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
    /** Tool calls the model requested. */
    tool_calls_used: ColumnType<number, number | undefined, number>;
    /** Input plus output tokens over every model turn (bigint: read back as a string). */
    tokens_used: ColumnType<string | number, number | undefined, number>;
    price: ModelPriceV1 | string | null;
    /** `null` when the model had no price. */
    cost_usd: number | null;
    bound: BoundReachedV1 | string | null;
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
