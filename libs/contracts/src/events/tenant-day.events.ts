/**
 * Tenant-day events (`ormuz.tenant_day.*.v1`): the wire contract of the `usage` context, owned by `model-loop`. One
 * tenant's usage of one UTC day is one aggregate; its subject is `aggregateSubject(ns, 'usage', tenant, day)` with
 * the day written `YYYY-MM-DD`, and the envelope's `subject` is the day.
 *
 * A model turn and a reply's tool calls are claimed before they happen, each decided against the day's usage and the
 * tenant's limits at that moment (recorded in the claim); what a recorded reply actually used (tokens, cost) is
 * recorded after. Each is keyed by its conversation and turn, so a repeated claim or record changes nothing. See
 * docs/decisions/0036-tenant-day-usage-on-the-log.md.
 */
import type { EventDraft } from '../envelope.js';
import { registerSchema } from '../schema-registry.js';
import { fragments, Struct, Type, type Static, type TSchema } from '../wire.js';

export const TenantDayEventType = {
  StepClaimed: 'ormuz.tenant_day.step_claimed.v1',
  ToolCallsClaimed: 'ormuz.tenant_day.tool_calls_claimed.v1',
  TurnUsed: 'ormuz.tenant_day.turn_used.v1',
} as const;

export type TenantDayEventType = (typeof TenantDayEventType)[keyof typeof TenantDayEventType];

export const TENANT_DAY_EVENT_TYPES: readonly TenantDayEventType[] = Object.freeze(Object.values(TenantDayEventType));

/** A UTC day, `YYYY-MM-DD`: the id of a tenant-day aggregate. */
export const UTC_DAY_SCHEMA = Type.String({ pattern: '^\\d{4}-\\d{2}-\\d{2}$' });

const count = (minimum: number) => Type.Integer({ minimum, maximum: Number.MAX_SAFE_INTEGER });
const dollars = Type.Number({ minimum: 0, maximum: 1_000_000_000 });

/**
 * A tenant's daily limits; an absent one is no limit. `day_steps`: model turns; `day_tool_calls`: tool requests run;
 * `day_tokens`: input plus output tokens; `day_cost_usd`: US dollars, priced as each conversation prices its turns.
 */
export const TenantDayLimitsV1 = Struct({
  day_steps: Type.Optional(count(0)),
  day_tool_calls: Type.Optional(count(0)),
  day_tokens: Type.Optional(count(0)),
  day_cost_usd: Type.Optional(dollars),
});
export type TenantDayLimitsV1 = Static<typeof TenantDayLimitsV1>;

/** Model turn `turn` of a conversation was claimed, decided against `limits`. */
export const StepClaimedV1 = Struct({
  conversation_id: fragments.identifier,
  turn: count(0),
  limits: TenantDayLimitsV1,
});
export type StepClaimedV1 = Static<typeof StepClaimedV1>;

/** The `count` tool requests of a conversation's reply at `turn` were claimed, decided against `limits`. */
export const ToolCallsClaimedV1 = Struct({
  conversation_id: fragments.identifier,
  turn: count(0),
  count: count(1),
  limits: TenantDayLimitsV1,
});
export type ToolCallsClaimedV1 = Static<typeof ToolCallsClaimedV1>;

/** What the conversation's recorded reply at `turn` used: its tokens, and its cost at the conversation's price. */
export const TurnUsedV1 = Struct({
  conversation_id: fragments.identifier,
  turn: count(0),
  input_tokens: count(0),
  output_tokens: count(0),
  /** US dollars; 0 when the conversation's model has no price. */
  cost_usd: dollars,
});
export type TurnUsedV1 = Static<typeof TurnUsedV1>;

export type TenantDayEventDraft =
  | EventDraft<'ormuz.tenant_day.step_claimed.v1', StepClaimedV1>
  | EventDraft<'ormuz.tenant_day.tool_calls_claimed.v1', ToolCallsClaimedV1>
  | EventDraft<'ormuz.tenant_day.turn_used.v1', TurnUsedV1>;

const TYPE_SET: ReadonlySet<string> = new Set(TENANT_DAY_EVENT_TYPES);

/** True when `draft`'s type is a tenant-day event type (the type only; validate `data` separately). */
export function isTenantDayEvent(draft: EventDraft): draft is TenantDayEventDraft {
  return TYPE_SET.has(draft.type);
}

export const TENANT_DAY_EVENT_SCHEMAS: Readonly<Record<TenantDayEventType, TSchema>> = {
  [TenantDayEventType.StepClaimed]: StepClaimedV1,
  [TenantDayEventType.ToolCallsClaimed]: ToolCallsClaimedV1,
  [TenantDayEventType.TurnUsed]: TurnUsedV1,
};

for (const type of TENANT_DAY_EVENT_TYPES) {
  registerSchema(type, {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    title: type,
    ...TENANT_DAY_EVENT_SCHEMAS[type],
  });
}
