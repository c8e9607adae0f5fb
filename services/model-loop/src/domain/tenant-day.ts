/**
 * The tenant-day decider: one tenant's model usage in one UTC day, as claims decided before they are spent and
 * records of what was spent (docs/decisions/0036). Pure: no I/O, no clock.
 *
 * A model turn is claimed (`ClaimStep`) before the model is called and refused once the day's turns, tokens or cost
 * have reached the tenant's limits; a reply's tool requests are claimed (`ClaimToolCalls`) before any is handed to
 * policy and refused when they would pass the day's tool calls; what a recorded reply used is recorded after
 * (`RecordTurnUsage`). Each is keyed by (conversation, turn): repeating one decides nothing, so a step retried after a
 * crash or by another replica never counts twice. Claims are appended with the expected sequence, so two
 * conversations racing for the day's last turn are decided one after the other, and the second is refused.
 */
import {
  isTenantDayEvent,
  TenantDayEventType as E,
  type TenantDayEventDraft,
  type TenantDayLimitsV1,
} from '@ormuz/contracts';
import { InvalidConversationCommandError, TenantDaySpentError, type TenantDayBoundReached } from './errors.js';

export const TENANT_DAY_STATE_VERSION = 1;

/** What one conversation has claimed and recorded in the day: the next turn not yet claimed or recorded, each. */
export interface ConversationInDay {
  readonly steps: number;
  readonly tools: number;
  readonly used: number;
}

export interface TenantDayState {
  readonly steps: number;
  readonly tool_calls: number;
  readonly tokens: number;
  readonly cost_usd: number;
  readonly conversations: Readonly<Record<string, ConversationInDay>>;
}

export const initialTenantDay: TenantDayState = Object.freeze({
  steps: 0,
  tool_calls: 0,
  tokens: 0,
  cost_usd: 0,
  conversations: Object.freeze({}),
});

/** Who and which day a command is for: only for the refusal's sentence. */
interface Day {
  readonly tenant: string;
  readonly day: string;
  readonly conversation_id: string;
  readonly turn: number;
}

/** Claim model turn `turn` of a conversation, against the tenant's limits in force now. */
export interface ClaimStep {
  readonly type: 'ClaimStep';
  readonly data: Day & { readonly limits: TenantDayLimitsV1 };
}

/** Claim the `count` tool requests of the conversation's reply at `turn`, before any is handed to policy. */
export interface ClaimToolCalls {
  readonly type: 'ClaimToolCalls';
  readonly data: Day & { readonly count: number; readonly limits: TenantDayLimitsV1 };
}

/** Record what the conversation's recorded reply at `turn` used. Never refused: it is spent already. */
export interface RecordTurnUsage {
  readonly type: 'RecordTurnUsage';
  readonly data: Day & { readonly input_tokens: number; readonly output_tokens: number; readonly cost_usd: number };
}

export type TenantDayCommand = ClaimStep | ClaimToolCalls | RecordTurnUsage;

const NONE: ConversationInDay = Object.freeze({ steps: 0, tools: 0, used: 0 });

function inDay(state: TenantDayState, conversationId: string): ConversationInDay {
  return Object.hasOwn(state.conversations, conversationId) ? state.conversations[conversationId]! : NONE;
}

function withConversation(state: TenantDayState, id: string, next: ConversationInDay): TenantDayState {
  return { ...state, conversations: { ...state.conversations, [id]: next } };
}

export function evolveTenantDay(state: TenantDayState, event: TenantDayEventDraft): TenantDayState {
  const d = event.data;
  const c = inDay(state, d.conversation_id);
  switch (event.type) {
    case E.StepClaimed:
      return withConversation({ ...state, steps: state.steps + 1 }, d.conversation_id, { ...c, steps: d.turn + 1 });
    case E.ToolCallsClaimed:
      return withConversation({ ...state, tool_calls: state.tool_calls + event.data.count }, d.conversation_id, {
        ...c,
        tools: d.turn + 1,
      });
    case E.TurnUsed:
      return withConversation(
        {
          ...state,
          tokens: state.tokens + event.data.input_tokens + event.data.output_tokens,
          cost_usd: state.cost_usd + event.data.cost_usd,
        },
        d.conversation_id,
        { ...c, used: d.turn + 1 },
      );
    default:
      return assertNever(event);
  }
}

/**
 * The first of the day's limits that leaves no room for another model turn: its turns, tokens or cost have reached
 * it (in that order); `null` while every one has room. A limit absent from `limits` is no limit.
 */
export function spentBound(state: TenantDayState, limits: TenantDayLimitsV1): TenantDayBoundReached | null {
  if (limits.day_steps !== undefined && state.steps >= limits.day_steps) {
    return { bound: 'tenant_day_steps', limit: limits.day_steps, used: state.steps };
  }
  if (limits.day_tokens !== undefined && state.tokens >= limits.day_tokens) {
    return { bound: 'tenant_day_tokens', limit: limits.day_tokens, used: state.tokens };
  }
  if (limits.day_cost_usd !== undefined && state.cost_usd >= limits.day_cost_usd) {
    return { bound: 'tenant_day_cost', limit: limits.day_cost_usd, used: state.cost_usd };
  }
  return null;
}

export function decideTenantDay(command: TenantDayCommand, state: TenantDayState): TenantDayEventDraft[] {
  const d = command.data;
  if (!Number.isInteger(d.turn) || d.turn < 0) {
    throw new InvalidConversationCommandError(command.type, `turn ${d.turn} is not a whole number from 0`);
  }
  const c = inDay(state, d.conversation_id);
  switch (command.type) {
    case 'ClaimStep': {
      if (d.turn < c.steps) return [];
      const spent = spentBound(state, command.data.limits);
      if (spent) throw new TenantDaySpentError(d.tenant, d.day, spent);
      return [
        {
          type: E.StepClaimed,
          data: { conversation_id: d.conversation_id, turn: d.turn, limits: command.data.limits },
        },
      ];
    }
    case 'ClaimToolCalls': {
      const { count, limits } = command.data;
      if (!Number.isInteger(count) || count < 1) {
        throw new InvalidConversationCommandError(command.type, `count ${count} is not a whole number from 1`);
      }
      if (d.turn < c.tools) return [];
      if (limits.day_tool_calls !== undefined && state.tool_calls + count > limits.day_tool_calls) {
        throw new TenantDaySpentError(d.tenant, d.day, {
          bound: 'tenant_day_tool_calls',
          limit: limits.day_tool_calls,
          used: state.tool_calls,
        });
      }
      return [{ type: E.ToolCallsClaimed, data: { conversation_id: d.conversation_id, turn: d.turn, count, limits } }];
    }
    case 'RecordTurnUsage': {
      const { input_tokens, output_tokens, cost_usd } = command.data;
      if (![input_tokens, output_tokens].every((n) => Number.isInteger(n) && n >= 0) || !(cost_usd >= 0)) {
        throw new InvalidConversationCommandError(command.type, 'tokens and cost must be 0 or more');
      }
      if (d.turn < c.used) return [];
      return [
        {
          type: E.TurnUsed,
          data: { conversation_id: d.conversation_id, turn: d.turn, input_tokens, output_tokens, cost_usd },
        },
      ];
    }
    default:
      return assertNever(command);
  }
}

/** The UTC day of `time`, `YYYY-MM-DD`: the id of the tenant-day aggregate a claim or record at that time goes to. */
export function utcDay(time: Date): string {
  return time.toISOString().slice(0, 10);
}

function assertNever(value: never): never {
  throw new Error(`unhandled tenant-day variant ${JSON.stringify(value)}`);
}

/** The decider as one value, in the shape the event log's command runner takes. */
export const tenantDayDecider = Object.freeze({
  initialState: initialTenantDay,
  evolve: evolveTenantDay,
  decide: (command: TenantDayCommand, state: TenantDayState) => decideTenantDay(command, state),
  stateVersion: TENANT_DAY_STATE_VERSION,
  isEvent: isTenantDayEvent,
});
