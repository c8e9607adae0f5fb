/**
 * The tenants' days against the log, for the chaos runs: what model-loop serves as a tenant's usage of each day
 * (`model-loop.tenant.usage`, loaded as it decides claims) must equal a fold of the usage stream from sequence 1, and
 * the usage stream must count each recorded reply of the conversations stream exactly once: one claimed turn, its
 * tokens, and its tool requests handed to policy, none claimed twice and none missing (docs/decisions/0036).
 */
import { jetstream } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import {
  contextFilter,
  ConversationEventType,
  TenantDayEventType,
  type MessageAddedV1,
  type StepClaimedV1,
  type TenantUsageV1,
  type ToolCallsClaimedV1,
  type TurnUsedV1,
} from '@ormuz/contracts';
import { replay, streamName } from '@ormuz/event-log';

/** A tenant's usage of one day as the usage stream folds. */
type Day = { -readonly [K in keyof TenantUsageV1['usage']]: TenantUsageV1['usage'][K] };

/** Problems found; empty when every day is counted as the log says. `usage` asks model-loop for one day. */
export async function usageVerdict(
  nc: NatsConnection,
  namespace: string,
  tenant: string,
  usage: (day: string) => Promise<TenantUsageV1>,
): Promise<string[]> {
  const js = jetstream(nc);
  const problems: string[] = [];
  const days = new Map<string, Day>();
  const claimed = {
    steps: new Map<string, number>(),
    tools: new Map<string, number>(),
    used: new Map<string, number>(),
  };
  const count = (m: Map<string, number>, key: string, n = 1) => m.set(key, (m.get(key) ?? 0) + n);
  for await (const item of replay(js, {
    stream: streamName(namespace, 'usage'),
    filterSubject: contextFilter(namespace, 'usage'),
  })) {
    if (!item.event) {
      problems.push(`unreadable usage message at ${item.seq}: ${item.error}`);
      continue;
    }
    const e = item.event;
    if (e.tenant !== tenant) continue;
    const day = days.get(e.subject) ?? { steps: 0, tool_calls: 0, tokens: 0, cost_usd: 0 };
    days.set(e.subject, day);
    const key = (d: { conversation_id: string; turn: number }) => `${d.conversation_id}/${d.turn}`;
    if (e.type === TenantDayEventType.StepClaimed) {
      day.steps += 1;
      count(claimed.steps, key(e.data as StepClaimedV1));
    } else if (e.type === TenantDayEventType.ToolCallsClaimed) {
      const d = e.data as ToolCallsClaimedV1;
      day.tool_calls += d.count;
      count(claimed.tools, key(d), d.count);
    } else if (e.type === TenantDayEventType.TurnUsed) {
      const d = e.data as TurnUsedV1;
      day.tokens += d.input_tokens + d.output_tokens;
      day.cost_usd += d.cost_usd;
      count(claimed.used, key(d), d.input_tokens + d.output_tokens);
    }
  }
  for (const [day, folded] of days) {
    const served = (await usage(day)).usage;
    if (JSON.stringify(served) !== JSON.stringify(folded)) {
      problems.push(
        `${tenant} on ${day}: model-loop serves ${JSON.stringify(served)}, the log folds to ${JSON.stringify(folded)}`,
      );
    }
  }

  // What the conversations recorded: each reply's tokens, and its requests that were not answered by the loop itself.
  const replies = new Map<string, number>();
  const requests = new Map<string, number>();
  const rejected = new Set<string>();
  const callTurn = new Map<string, string>();
  for await (const item of replay(js, {
    stream: streamName(namespace, 'conversations'),
    filterSubject: contextFilter(namespace, 'conversations'),
  })) {
    const e = item.event;
    if (!e || e.tenant !== tenant || e.type !== ConversationEventType.MessageAdded) continue;
    const d = e.data as MessageAddedV1;
    const key = `${e.subject}/${d.turn}`;
    if (d.message.role === 'assistant') {
      replies.set(key, (d.usage?.input_tokens ?? 0) + (d.usage?.output_tokens ?? 0));
      for (const c of d.message.tool_calls ?? []) callTurn.set(c.call_id, key);
    }
    if (d.message.role === 'tool' && d.message.provenance?.status === 'rejected')
      rejected.add(d.message.provenance.call_id);
  }
  for (const [callId, key] of callTurn) if (!rejected.has(callId)) count(requests, key);

  for (const [key, tokens] of replies) {
    if (claimed.steps.get(key) !== 1) problems.push(`turn ${key} was claimed ${claimed.steps.get(key) ?? 0} times`);
    if (claimed.used.get(key) !== tokens) {
      problems.push(`turn ${key} used ${tokens} tokens; its tenant's day counts ${claimed.used.get(key) ?? 'none'}`);
    }
    const asked = requests.get(key) ?? 0;
    if ((claimed.tools.get(key) ?? 0) !== asked) {
      problems.push(
        `turn ${key} handed ${asked} requests to policy; its tenant's day counts ${claimed.tools.get(key) ?? 0}`,
      );
    }
  }
  for (const key of claimed.steps.keys())
    if (!replies.has(key)) problems.push(`turn ${key} was claimed but has no reply`);
  return problems;
}
