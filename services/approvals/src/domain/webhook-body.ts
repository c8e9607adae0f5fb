/**
 * Which call events endpoints are told about, and what the POST body says. Pure: the reactor supplies the call's
 * facts that the event itself does not carry (the tool and agent from `requested`, the summary from `staged`).
 */
import {
  ToolCallEventType,
  WEBHOOK_EVENT_TYPES,
  type ApprovalWebhookV1,
  type ToolCallEventDraft,
  type ToolCallEventOf,
  type WebhookEventV1,
} from '@ormuz/contracts';
import type { Enveloped } from '@ormuz/event-log';

type T = typeof ToolCallEventType;
/** The events a webhook reports. */
export type ApprovalEvent = Enveloped<ToolCallEventOf<T['Staged'] | T['Approved'] | T['Denied'] | T['Expired']>>;

/** The webhook event an approval event is, or undefined for any other call event. */
export function webhookEventOf(event: Enveloped<ToolCallEventDraft>): WebhookEventV1 | undefined {
  switch (event.type) {
    case ToolCallEventType.Staged:
      return 'staged';
    case ToolCallEventType.Approved:
    case ToolCallEventType.Denied:
      return 'decided';
    case ToolCallEventType.Expired:
      return 'expired';
    default:
      return undefined;
  }
}

/** What the call's earlier events say, for a body: null where the log does not have it. */
export interface CallFacts {
  readonly tool: string | null;
  readonly agent_id: string | null;
  readonly summary: string | null;
  readonly expires_at: string | null;
}

/** The body of the webhook reporting `event`; its JSON text is what is signed and sent, the same on every attempt. */
export function webhookBody(event: ApprovalEvent, facts: CallFacts): ApprovalWebhookV1 {
  const kind = webhookEventOf(event)!;
  const decision =
    event.type === ToolCallEventType.Approved ? 'approved' : event.type === ToolCallEventType.Denied ? 'denied' : null;
  return {
    type: WEBHOOK_EVENT_TYPES[kind],
    event_id: event.id,
    tenant: event.tenant,
    approval_id: event.data.approval_id,
    call_id: event.data.call_id,
    tool: facts.tool,
    agent_id: facts.agent_id,
    summary: event.type === ToolCallEventType.Staged ? event.data.summary : facts.summary,
    expires_at: event.type === ToolCallEventType.Staged ? event.data.expires_at : facts.expires_at,
    decision,
    decided_by: 'decided_by' in event.data ? event.data.decided_by : null,
    reason: 'reason' in event.data ? event.data.reason : null,
    occurred_at: event.time,
  };
}
