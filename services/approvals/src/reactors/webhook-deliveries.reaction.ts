import { contextFilter, isToolCallEvent, ToolCallEventType, type ToolCallEventDraft } from '@ormuz/contracts';
import { streamName, type Enveloped, type Reaction } from '@ormuz/event-log';
import type { ToolCalls } from '@ormuz/service-kit';
import { webhookBody, webhookEventOf, type ApprovalEvent, type CallFacts } from '../domain/webhook-body.js';
import { APPROVALS_SCHEMA } from '../persistence/migrations.js';
import type { WebhookDeliveriesRepository } from '../persistence/webhook-deliveries.repository.js';
import type { WebhookEndpointsRepository } from '../persistence/webhook-endpoints.repository.js';

export const WEBHOOK_REACTION = 'approvals_webhooks';

export interface WebhookReactionDeps {
  readonly endpoints: WebhookEndpointsRepository;
  readonly deliveries: WebhookDeliveriesRepository;
  /** Reads the call's earlier events for what a body says beyond the event. */
  readonly calls: ToolCalls;
  /** Called when new deliveries are due, so the deliverer sends them without waiting for its poll. */
  readonly onEnqueued: () => void;
}

/**
 * Turns a call's staged, approved, denied and expired events into deliveries, one per subscribed endpoint. A reaction
 * with its own checkpoint, not part of the inbox projection: it runs after the event is on the log, resumes from its
 * checkpoint after a crash, and what it writes is keyed by (endpoint, event), so handling an event again (a crash
 * before the checkpoint moved, a replay from sequence 1) finds the rows it made and adds none. It only records what
 * to send; the deliverer sends.
 */
export function webhookDeliveriesReaction(namespace: string, deps: WebhookReactionDeps): Reaction<ToolCallEventDraft> {
  return {
    name: WEBHOOK_REACTION,
    schema: APPROVALS_SCHEMA,
    stream: streamName(namespace, 'calls'),
    filterSubject: contextFilter(namespace, 'calls'),
    accepts: isToolCallEvent,
    async handle(event: Enveloped<ToolCallEventDraft>) {
      const kind = webhookEventOf(event);
      if (!kind) return;
      const approval = event as ApprovalEvent;
      const endpoints = await deps.endpoints.subscribed(event.tenant, kind, new Date(event.time));
      if (endpoints.length === 0) return;
      const facts = await callFacts(deps.calls, event.tenant, approval.data.call_id);
      const body = webhookBody(approval, facts);
      const added = await deps.deliveries.enqueue(
        {
          tenant: event.tenant,
          webhookIds: endpoints.map((e) => e.webhook_id),
          eventId: event.id,
          event: kind,
          approvalId: body.approval_id,
          callId: body.call_id,
          agentId: facts.agent_id,
          body: JSON.stringify(body),
        },
        new Date(),
      );
      if (added > 0) deps.onEnqueued();
    },
  };
}

/** The tool and agent (from `requested`) and the summary and expiry (from `staged`) of a call, from the log. */
async function callFacts(calls: ToolCalls, tenant: string, callId: string): Promise<CallFacts> {
  const facts = { tool: null, agent_id: null, summary: null, expires_at: null } as {
    -readonly [K in keyof CallFacts]: CallFacts[K];
  };
  for (const { event: e } of await calls.timeline(tenant, callId)) {
    if (!isToolCallEvent(e)) continue;
    if (e.type === ToolCallEventType.Requested) {
      facts.tool = e.data.tool;
      facts.agent_id = e.data.agent_id;
    } else if (e.type === ToolCallEventType.Staged) {
      facts.summary = e.data.summary;
      facts.expires_at = e.data.expires_at;
    }
  }
  return facts;
}
