import { TenantDayEventType as E, type TenantDayEventDraft, type TenantDayLimitsV1 } from '@ormuz/contracts';
import { deciderSpec } from '@ormuz/testing';
import { InvalidConversationCommandError, TenantDaySpentError } from './errors.js';
import { spentBound, tenantDayDecider, utcDay, type TenantDayCommand } from './tenant-day.js';

const NOW = new Date('2030-01-01T12:00:00.000Z');
const DAY = { tenant: 'acme', day: '2030-01-01' };
const { given, after } = deciderSpec(tenantDayDecider, { now: NOW });

const cmd = {
  step: (conversation_id: string, turn: number, limits: TenantDayLimitsV1 = {}): TenantDayCommand => ({
    type: 'ClaimStep',
    data: { ...DAY, conversation_id, turn, limits },
  }),
  tools: (conversation_id: string, turn: number, count: number, limits: TenantDayLimitsV1 = {}): TenantDayCommand => ({
    type: 'ClaimToolCalls',
    data: { ...DAY, conversation_id, turn, count, limits },
  }),
  used: (conversation_id: string, turn: number, tokens: number, cost_usd = 0): TenantDayCommand => ({
    type: 'RecordTurnUsage',
    data: { ...DAY, conversation_id, turn, input_tokens: tokens - 1, output_tokens: 1, cost_usd },
  }),
};

const ev = {
  step: (conversation_id: string, turn: number, limits: TenantDayLimitsV1 = {}): TenantDayEventDraft => ({
    type: E.StepClaimed,
    data: { conversation_id, turn, limits },
  }),
  tools: (
    conversation_id: string,
    turn: number,
    count: number,
    limits: TenantDayLimitsV1 = {},
  ): TenantDayEventDraft => ({
    type: E.ToolCallsClaimed,
    data: { conversation_id, turn, count, limits },
  }),
  used: (conversation_id: string, turn: number, tokens: number, cost_usd = 0): TenantDayEventDraft => ({
    type: E.TurnUsed,
    data: { conversation_id, turn, input_tokens: tokens - 1, output_tokens: 1, cost_usd },
  }),
};

describe('the tenant-day decider', () => {
  describe('claiming a model turn', () => {
    it('claims a turn while the day has room, recording the limits it was decided against', () => {
      given(ev.step('c1', 0))
        .when(cmd.step('c2', 0, { day_steps: 2 }))
        .then([ev.step('c2', 0, { day_steps: 2 })]);
    });

    it('claims without limit when the tenant has none', () => {
      given(ev.step('c1', 0), ev.step('c1', 1), ev.step('c1', 2))
        .when(cmd.step('c1', 3))
        .then([ev.step('c1', 3)]);
    });

    it('decides nothing for a turn already claimed, so a retried step never counts twice', () => {
      given(ev.step('c1', 0), ev.step('c1', 1))
        .when(cmd.step('c1', 1, { day_steps: 2 }))
        .then([]);
      given(ev.step('c1', 0), ev.step('c1', 1))
        .when(cmd.step('c1', 0, { day_steps: 1 }))
        .then([]);
    });

    it("refuses a turn once the day's turns are used, naming the bound and its figures", () => {
      const err = given(ev.step('c1', 0), ev.step('c2', 0))
        .when(cmd.step('c1', 1, { day_steps: 2 }))
        .thenThrows(TenantDaySpentError, /acme has reached its daily limit on 2030-01-01 \(UTC\): 2 of 2 model turns/);
      expect(err.bound).toEqual({ bound: 'tenant_day_steps', limit: 2, used: 2 });
      expect(err.code).toBe('tenant_day_spent');
    });

    it("refuses a turn once the day's tokens or cost have reached their limit", () => {
      const history = [ev.step('c1', 0), ev.used('c1', 0, 1000, 0.5)];
      given(...history)
        .when(cmd.step('c2', 0, { day_tokens: 1000 }))
        .thenThrows(TenantDaySpentError, /1,000 of 1,000 tokens used.*--day-tokens/);
      given(...history)
        .when(cmd.step('c2', 0, { day_cost_usd: 0.5 }))
        .thenThrows(TenantDaySpentError, /\$0\.5000 of \$0\.5000 spent/);
      given(...history)
        .when(cmd.step('c2', 0, { day_tokens: 1001, day_cost_usd: 0.51 }))
        .then([ev.step('c2', 0, { day_tokens: 1001, day_cost_usd: 0.51 })]);
    });

    it('decides against the limits it is given: a limit raised mid-day reopens the day, one lowered closes it', () => {
      const spent = after(cmd.step('c1', 0, { day_steps: 1 }));
      spent.when(cmd.step('c1', 1, { day_steps: 1 })).thenThrows(TenantDaySpentError);
      spent.when(cmd.step('c1', 1, { day_steps: 5 })).then([ev.step('c1', 1, { day_steps: 5 })]);
      after(cmd.step('c1', 0), cmd.step('c1', 1))
        .when(cmd.step('c2', 0, { day_steps: 1 }))
        .thenThrows(TenantDaySpentError);
    });

    it('refuses a turn that is not a whole number from 0', () => {
      given()
        .when(cmd.step('c1', -1))
        .thenThrows(InvalidConversationCommandError, /turn -1/);
    });
  });

  describe('claiming a reply’s tool calls', () => {
    it('claims all of a reply’s calls at once while they fit', () => {
      given(ev.tools('c1', 0, 2))
        .when(cmd.tools('c2', 0, 3, { day_tool_calls: 5 }))
        .then([ev.tools('c2', 0, 3, { day_tool_calls: 5 })]);
    });

    it('refuses a reply whose calls would pass the day’s limit, so none of them runs', () => {
      const err = given(ev.tools('c1', 0, 2))
        .when(cmd.tools('c2', 0, 4, { day_tool_calls: 5 }))
        .thenThrows(TenantDaySpentError, /2 of 5 tool calls used/);
      expect(err.bound).toEqual({ bound: 'tenant_day_tool_calls', limit: 5, used: 2 });
    });

    it('decides nothing for a reply already claimed, whatever the limit is now', () => {
      given(ev.tools('c1', 0, 2))
        .when(cmd.tools('c1', 0, 2, { day_tool_calls: 0 }))
        .then([]);
    });

    it('refuses a count under 1', () => {
      given()
        .when(cmd.tools('c1', 0, 0))
        .thenThrows(InvalidConversationCommandError, /count 0/);
    });
  });

  describe('recording what a turn used', () => {
    it('records a turn’s tokens and cost, even past the limits (they are spent already)', () => {
      const day = given(ev.step('c1', 0), ev.used('c1', 0, 900)).when(cmd.used('c1', 1, 500, 0.25));
      day.then([ev.used('c1', 1, 500, 0.25)]);
      expect(day.state).toMatchObject({ steps: 1, tokens: 1400, cost_usd: 0.25 });
    });

    it('decides nothing for a turn already recorded', () => {
      given(ev.used('c1', 0, 900), ev.used('c1', 1, 10))
        .when(cmd.used('c1', 0, 900))
        .then([]);
    });

    it('refuses negative figures', () => {
      given()
        .when(cmd.used('c1', 0, 10, -1))
        .thenThrows(InvalidConversationCommandError, /0 or more/);
    });
  });

  it('sums every conversation of the day, each counted once', () => {
    const { state } = given(
      ev.step('c1', 0),
      ev.used('c1', 0, 100, 0.1),
      ev.tools('c1', 0, 2),
      ev.step('c2', 0),
      ev.used('c2', 0, 50, 0.05),
      ev.step('c1', 1),
    );
    expect(state).toMatchObject({ steps: 3, tool_calls: 2, tokens: 150 });
    expect(state.cost_usd).toBeCloseTo(0.15);
    expect(state.conversations).toEqual({ c1: { steps: 2, tools: 1, used: 1 }, c2: { steps: 1, tools: 0, used: 1 } });
  });

  it('names the first spent limit, turns before tokens before cost, and none while all have room', () => {
    const { state } = given(ev.step('c1', 0), ev.used('c1', 0, 100, 1));
    expect(spentBound(state, {})).toBeNull();
    expect(spentBound(state, { day_steps: 2, day_tokens: 101, day_cost_usd: 2 })).toBeNull();
    expect(spentBound(state, { day_steps: 1, day_tokens: 100 })?.bound).toBe('tenant_day_steps');
    expect(spentBound(state, { day_tokens: 100, day_cost_usd: 1 })?.bound).toBe('tenant_day_tokens');
    expect(spentBound(state, { day_cost_usd: 1 })).toEqual({ bound: 'tenant_day_cost', limit: 1, used: 1 });
  });

  it('names the UTC day of a moment', () => {
    expect(utcDay(new Date('2030-01-01T23:59:59.999Z'))).toBe('2030-01-01');
    expect(utcDay(new Date('2030-01-02T00:30:00+01:00'))).toBe('2030-01-01');
  });
});
