import { Injectable } from '@nestjs/common';
import { ConversationEventType as E, type TenantUsageV1 } from '@ormuz/contracts';
import { costOf, type LiveConversation } from '../domain/conversation.js';
import { TenantDaySpentError } from '../domain/errors.js';
import { spentBound, utcDay, type TenantDayCommand } from '../domain/tenant-day.js';
import type { ConversationCause, ConversationRecord } from '../persistence/conversations.js';
import { TenantDays } from '../persistence/tenant-days.js';
import { TenantLimitsRepository } from '../persistence/tenant-limits.repository.js';

/**
 * A tenant's daily budget as the loop spends it: claims before a model turn and before a reply's tool calls, and the
 * record of what a recorded reply used, each on the tenant-day aggregate of the UTC day the conversation's log puts it
 * in (so a retry after a crash, on any replica, reaches the same day and changes nothing), decided against the
 * tenant's limits in force now (docs/decisions/0036).
 */
@Injectable()
export class TenantDayBudget {
  /** Claims and records this process has seen decided: tenant, conversation, kind and turn (see `once`). */
  private readonly decided = new Set<string>();

  constructor(
    private readonly days: TenantDays,
    private readonly limits: TenantLimitsRepository,
  ) {}

  /**
   * Claims model turn `turn` on the day of the conversation's last event (what made the turn due). Throws
   * {@link TenantDaySpentError} when the day has no room.
   */
  async claimStep(tenant: string, record: ConversationRecord, turn: number, cause: ConversationCause): Promise<void> {
    const last = record.events.at(-1);
    if (!last) throw new Error(`conversation ${cause.correlationid} has no events to claim a turn for`);
    const day = utcDay(new Date(last.time));
    const conversation_id = id(record);
    await this.once(tenant, day, { type: 'ClaimStep', conversation_id, turn }, cause, async () => ({
      type: 'ClaimStep',
      data: { tenant, day, conversation_id, turn, limits: await this.limits.inForce(tenant) },
    }));
  }

  /**
   * Claims the `count` requests of the reply at `turn`, on the day that reply was recorded, before any is handed to
   * policy. Throws {@link TenantDaySpentError} when they would pass the day's tool calls.
   */
  async claimToolCalls(
    tenant: string,
    record: ConversationRecord,
    turn: number,
    count: number,
    cause: ConversationCause,
  ): Promise<void> {
    const reply = replyAt(record, turn);
    if (!reply) throw new Error(`conversation ${cause.correlationid} has no reply at turn ${turn}`);
    const day = utcDay(new Date(reply.time));
    const conversation_id = id(record);
    await this.once(tenant, day, { type: 'ClaimToolCalls', conversation_id, turn }, cause, async () => ({
      type: 'ClaimToolCalls',
      data: { tenant, day, conversation_id, turn, count, limits: await this.limits.inForce(tenant) },
    }));
  }

  /**
   * Records what the conversation's last recorded reply used, on the day it was recorded; nothing when that is
   * recorded already. Every reply is followed by a step of the loop, which settles it before acting.
   */
  async settleLastReply(tenant: string, record: ConversationRecord, cause: ConversationCause): Promise<void> {
    const state = record.state as LiveConversation;
    const reply = replyAt(record, state.turns - 1);
    const usage = reply?.data.usage;
    if (!reply || !usage) return;
    const day = utcDay(new Date(reply.time));
    const conversation_id = id(record);
    const turn = reply.data.turn;
    await this.once(tenant, day, { type: 'RecordTurnUsage', conversation_id, turn }, cause, () =>
      Promise.resolve({
        type: 'RecordTurnUsage',
        data: {
          tenant,
          day,
          conversation_id,
          turn,
          input_tokens: usage.input_tokens,
          output_tokens: usage.output_tokens,
          cost_usd: state.facts.price ? costOf(usage, state.facts.price) : 0,
        },
      }),
    );
  }

  /**
   * Runs the command `make` gives on the tenant's day, unless this process has seen the same kind for the same
   * conversation and turn decided: a repeat would decide nothing (its day is read from the conversation's log, so it
   * is the same day). Only a saving: after a restart, or on another replica, the log decides the repeat as nothing.
   */
  private async once(
    tenant: string,
    day: string,
    what: { readonly type: TenantDayCommand['type']; readonly conversation_id: string; readonly turn: number },
    cause: ConversationCause,
    make: () => Promise<TenantDayCommand>,
  ): Promise<void> {
    const key = `${tenant}/${what.conversation_id}/${what.type}/${what.turn}`;
    if (this.decided.has(key)) return;
    await this.days.execute(tenant, day, await make(), cause);
    if (this.decided.size >= MAX_REMEMBERED) this.decided.clear();
    this.decided.add(key);
  }

  /** Refuses (with {@link TenantDaySpentError}) while the tenant's day at `now` has no room for a model turn. */
  async assertOpen(tenant: string, now: Date): Promise<void> {
    const day = utcDay(now);
    const [{ state }, limits] = await Promise.all([this.days.load(tenant, day), this.limits.inForce(tenant)]);
    const spent = spentBound(state, limits);
    if (spent) throw new TenantDaySpentError(tenant, day, spent);
  }

  /** What the tenant used on `day`, read from the log, against the limits in force now. */
  async usage(tenant: string, day: string): Promise<TenantUsageV1> {
    const [{ state }, limits] = await Promise.all([this.days.load(tenant, day), this.limits.inForce(tenant)]);
    const calls =
      limits.day_tool_calls !== undefined && state.tool_calls >= limits.day_tool_calls
        ? { bound: 'tenant_day_tool_calls' as const, limit: limits.day_tool_calls, used: state.tool_calls }
        : null;
    return {
      tenant,
      day,
      usage: { steps: state.steps, tool_calls: state.tool_calls, tokens: state.tokens, cost_usd: state.cost_usd },
      limits,
      spent: spentBound(state, limits) ?? calls,
    };
  }
}

const MAX_REMEMBERED = 100_000;

function id(record: ConversationRecord): string {
  if (record.state.status === 'absent') throw new Error('a conversation with no start has no budget');
  return record.state.facts.conversation_id;
}

/** The assistant message event of `turn`, with the time it was recorded. */
function replyAt(record: ConversationRecord, turn: number) {
  return record.events.findLast(
    (e): e is Extract<typeof e, { type: typeof E.MessageAdded }> =>
      e.type === E.MessageAdded && e.data.message.role === 'assistant' && e.data.turn === turn,
  );
}
