import { ConversationEventType as E } from '@ormuz/contracts';
import { deciderSpec } from '@ormuz/testing';
import {
  conversationDecider,
  nextAction,
  type ConversationCommand,
  type ConversationState,
  type LiveConversation,
} from './conversation.js';
import {
  ConversationConflictError,
  ConversationNotFoundError,
  ConversationStateError,
  InvalidConversationCommandError,
  UnknownToolCallError,
  UnpricedModelError,
} from './errors.js';
import { toolResult, type CallOutcomeReport } from '@ormuz/tool-call';

const NOW = new Date('2030-01-01T00:00:00.000Z');
const ID = 'conv_1';
const LIMITS = { maxSteps: 4, maxToolCalls: 4, maxTokens: 10_000, maxWallTimeMs: 60_000, maxCostUsd: null };
const OBSERVE = 'call_00000000000000000000000000000001';
const SEND = 'call_00000000000000000000000000000002';
const OTHER = 'call_00000000000000000000000000000003';

const cmd = {
  start: (task = 'Tell Alice I am late', pinned?: string[]): ConversationCommand => ({
    type: 'StartConversation',
    data: {
      conversation_id: ID,
      agent_id: 'agent-1',
      model: 'scripted:demo',
      task,
      device_id: 'phone-1',
      limits: LIMITS,
      ...(pinned ? { pinned_tools: pinned } : {}),
    },
  }),
  ask: (turn: number, tool: string, callId: string): ConversationCommand => ({
    type: 'AddModelReply',
    data: {
      conversation_id: ID,
      turn,
      content: '',
      tool_calls: [{ index: 0, name: tool, arguments: {}, call_id: callId }],
      usage: { input_tokens: 1, output_tokens: 0 },
    },
  }),
  activate: (callId: string, tool = 'device.send_message', version = 1): ConversationCommand => ({
    type: 'ActivateTool',
    data: { conversation_id: ID, call_id: callId, tool, version },
  }),
  reply: (
    turn: number,
    callIds: string[] = [],
    content = callIds.length ? '' : 'Done.',
    tokens = 10,
  ): ConversationCommand => ({
    type: 'AddModelReply',
    data: {
      conversation_id: ID,
      turn,
      content,
      tool_calls: callIds.map((call_id, index) => ({ index, name: 'device.screen_observe', arguments: {}, call_id })),
      usage: { input_tokens: tokens, output_tokens: 0 },
    },
  }),
  result: (callId: string, outcome: CallOutcomeReport): ConversationCommand => ({
    type: 'AddToolResult',
    data: {
      conversation_id: ID,
      call_id: callId,
      ...toolResult({ call_id: callId, tool: 'device.screen_observe', source: 'device:phone-1', outcome }),
    },
  }),
  pause: (): ConversationCommand => ({ type: 'PauseConversation', data: { conversation_id: ID } }),
  resume: (): ConversationCommand => ({ type: 'ResumeConversation', data: { conversation_id: ID, reason: 'decided' } }),
  complete: (): ConversationCommand => ({
    type: 'CompleteConversation',
    data: { conversation_id: ID, reason: 'answered', final_text: 'Done.' },
  }),
};

const outcome = {
  succeeded: { status: 'succeeded', result: { elements: [] } } as CallOutcomeReport,
  pending: {
    status: 'pending_confirmation',
    approval_id: 'apr_1',
    summary: 'Send a text to Alice',
  } as CallOutcomeReport,
  denied: { status: 'denied', reason: null } as CallOutcomeReport,
};

/**
 * Given these events (`given`), or the state after these commands were each decided and applied in turn (`after`),
 * when this command is decided at `NOW`, then these events, or this error.
 */
const { given, after, givenState } = deciderSpec(conversationDecider, { now: NOW });

function live(state: ConversationState): LiveConversation {
  if (state.status === 'absent') throw new Error('expected a started conversation');
  return state;
}

describe('start', () => {
  it('records the facts with a deadline from the wall-time limit, then the task as the first user message', () => {
    given()
      .when(cmd.start())
      .then([
        {
          type: E.Started,
          data: {
            conversation_id: ID,
            agent_id: 'agent-1',
            model: 'scripted:demo',
            task: 'Tell Alice I am late',
            device_id: 'phone-1',
            pinned_tools: [],
            limits: {
              max_steps: 4,
              max_tool_calls: 4,
              max_tokens: 10_000,
              deadline: '2030-01-01T00:01:00.000Z',
              max_wall_time_ms: 60_000,
            },
          },
        },
        {
          type: E.MessageAdded,
          data: { turn: 0, message: { role: 'user', content: 'Tell Alice I am late' }, usage: null },
        },
      ]);
  });

  it('does nothing when the same start is sent again', () => {
    after(cmd.start()).when(cmd.start()).then([]);
  });

  it('refuses a start that reuses the id with a different task, naming the difference', () => {
    after(cmd.start())
      .when(cmd.start('Something else'))
      .thenThrows(ConversationConflictError, /different task/);
  });

  it('records pinned tools as facts: the same list repeats, another one conflicts', () => {
    const pinned = after(cmd.start('Tell Alice I am late', ['device.screen_observe']));
    expect(live(pinned.state).facts.pinned_tools).toEqual(['device.screen_observe']);
    pinned.when(cmd.start('Tell Alice I am late', ['device.screen_observe'])).then([]);
    pinned.when(cmd.start()).thenThrows(ConversationConflictError, /different pinned_tools/);
  });

  it('reads a start event written before pinning existed as pinning nothing', () => {
    const [started] = given().when(cmd.start()).events;
    if (started?.type !== E.Started) throw new Error('expected the start event first');
    const { pinned_tools: _none, ...older } = started.data;
    expect(live(given({ ...started, data: older }).state).facts.pinned_tools).toEqual([]);
  });

  it('adds only the task when a crash left the start without it', () => {
    const [startedOnly] = given().when(cmd.start()).events;
    const crashed = given(startedOnly!);
    expect(nextAction(crashed.state, NOW)).toEqual({ kind: 'idle' });
    expect(crashed.when(cmd.start()).events.map((e) => e.type)).toEqual([E.MessageAdded]);
  });

  it('answers not found for any other command on a conversation that never started', () => {
    given().when(cmd.reply(0)).thenThrows(ConversationNotFoundError);
  });

  it('asks for the first model turn once started', () => {
    expect(nextAction(after(cmd.start()).state, NOW)).toEqual({ kind: 'call_model', turn: 0 });
  });
});

describe('model reply', () => {
  it('records the tool requests with their runtime-issued ids and hands them to policy next', () => {
    const { events } = after(cmd.start()).when(cmd.reply(0, [OBSERVE, SEND]));
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      type: E.MessageAdded,
      data: {
        turn: 0,
        message: {
          role: 'assistant',
          tool_calls: [
            { call_id: OBSERVE, index: 0 },
            { call_id: SEND, index: 1 },
          ],
        },
      },
    });
    const { state } = after(cmd.start(), cmd.reply(0, [OBSERVE, SEND]));
    expect(nextAction(state, NOW)).toEqual({ kind: 'submit', call_ids: [OBSERVE, SEND] });
  });

  it('ignores a second reply for a turn that already has one', () => {
    after(cmd.start(), cmd.reply(0, [OBSERVE]))
      .when(cmd.reply(0, [OTHER]))
      .then([]);
  });

  it("refuses a reply while the turn's tool calls are still outstanding", () => {
    after(cmd.start(), cmd.reply(0, [OBSERVE]))
      .when(cmd.reply(1))
      .thenThrows(ConversationStateError);
  });

  it('records the rejected results of requests the loop refuses with the reply, so they are never submitted', () => {
    const rejected = toolResult({
      call_id: SEND,
      tool: 'device.send_message',
      source: 'ormuz',
      outcome: { status: 'rejected', message: 'The arguments are not a JSON object.' },
    });
    const reply: ConversationCommand = {
      type: 'AddModelReply',
      data: {
        conversation_id: ID,
        turn: 0,
        content: '',
        tool_calls: [
          { index: 0, name: 'device.screen_observe', arguments: {}, call_id: OBSERVE },
          { index: 1, name: 'device.send_message', arguments: {}, call_id: SEND },
        ],
        usage: { input_tokens: 1, output_tokens: 1 },
        stop_reason: 'tool_use',
        rejected: [{ call_id: SEND, ...rejected }],
      },
    };
    const decided = after(cmd.start()).when(reply);
    expect(decided.events).toHaveLength(2);
    expect(decided.events[0]).toMatchObject({ data: { stop_reason: 'tool_use', message: { role: 'assistant' } } });
    expect(decided.events[1]).toMatchObject({ data: { turn: 0, message: { role: 'tool', tool_call_id: SEND } } });
    expect(nextAction(decided.state, NOW)).toEqual({ kind: 'submit', call_ids: [OBSERVE] });
    const other = { ...reply, data: { ...reply.data, rejected: [{ call_id: OTHER, ...rejected }] } };
    after(cmd.start())
      .when(other)
      .thenThrows(InvalidConversationCommandError, /not a request of this reply/);
  });

  it('moves to the next model turn when every request of a reply was rejected', () => {
    const rejected = toolResult({
      call_id: OBSERVE,
      tool: 'device.nope',
      source: 'ormuz',
      outcome: { status: 'rejected', message: 'No tool device.nope was offered.' },
    });
    const { state } = after(cmd.start()).when({
      type: 'AddModelReply',
      data: {
        conversation_id: ID,
        turn: 0,
        content: '',
        tool_calls: [{ index: 0, name: 'device.nope', arguments: {}, call_id: OBSERVE }],
        usage: { input_tokens: 1, output_tokens: 1 },
        rejected: [{ call_id: OBSERVE, ...rejected }],
      },
    });
    expect(nextAction(state, NOW)).toEqual({ kind: 'call_model', turn: 1 });
  });

  it('refuses a reply that uses one call id twice', () => {
    after(cmd.start())
      .when(cmd.reply(0, [OBSERVE, OBSERVE]))
      .thenThrows(InvalidConversationCommandError);
  });
});

describe('tool activation', () => {
  const ACTIVATE = 'call_00000000000000000000000000000009';
  const asked = () => after(cmd.start(), cmd.ask(0, 'ormuz.activate_tool', ACTIVATE));

  it('records the tool an activate_tool call activated, for every later turn', () => {
    asked()
      .when(cmd.activate(ACTIVATE))
      .then([{ type: E.ToolActivated, data: { call_id: ACTIVATE, tool: 'device.send_message', version: 1 } }]);
    expect(
      live(after(cmd.start(), cmd.ask(0, 'ormuz.activate_tool', ACTIVATE), cmd.activate(ACTIVATE)).state).activated,
    ).toEqual({
      'device.send_message': 1,
    });
  });

  it('is a no-op when repeated, and the newer version stands when the grant moved', () => {
    const activated = after(cmd.start(), cmd.ask(0, 'ormuz.activate_tool', ACTIVATE), cmd.activate(ACTIVATE));
    activated.when(cmd.activate(ACTIVATE)).then([]);
    const moved = after(
      cmd.start(),
      cmd.ask(0, 'ormuz.activate_tool', ACTIVATE),
      cmd.activate(ACTIVATE),
      cmd.activate(ACTIVATE, 'device.send_message', 2),
    );
    expect(live(moved.state).activated).toEqual({ 'device.send_message': 2 });
  });

  it('leaves the phase alone: the activation call still waits for its own result', () => {
    const { state } = after(cmd.start(), cmd.ask(0, 'ormuz.activate_tool', ACTIVATE), cmd.activate(ACTIVATE));
    expect(nextAction(state, NOW)).toEqual({ kind: 'submit', call_ids: [ACTIVATE] });
  });

  it('refuses an activation by a call the conversation never made, or by another tool', () => {
    asked().when(cmd.activate(OTHER)).thenThrows(UnknownToolCallError);
    after(cmd.start(), cmd.reply(0, [OBSERVE]))
      .when(cmd.activate(OBSERVE))
      .thenThrows(InvalidConversationCommandError, /not ormuz\.activate_tool/);
    asked()
      .when(cmd.activate(ACTIVATE, 'device.tap', 0))
      .thenThrows(InvalidConversationCommandError);
  });
});

describe('tool result', () => {
  const asked = () => after(cmd.start(), cmd.reply(0, [OBSERVE, SEND]));

  it('is added as a tool message of its call’s turn, with its provenance', () => {
    const [event] = asked().when(cmd.result(OBSERVE, outcome.succeeded)).events;
    expect(event).toMatchObject({
      type: E.MessageAdded,
      data: {
        turn: 0,
        message: {
          role: 'tool',
          tool_call_id: OBSERVE,
          provenance: {
            source: 'device:phone-1',
            call_id: OBSERVE,
            status: 'succeeded',
            truncated: false,
            approval: null,
          },
        },
        usage: null,
      },
    });
  });

  it('is added once per call: a second result for the same call is a no-op', () => {
    after(cmd.start(), cmd.reply(0, [OBSERVE, SEND]), cmd.result(OBSERVE, outcome.succeeded))
      .when(cmd.result(OBSERVE, outcome.succeeded))
      .then([]);
  });

  it('keeps the final result after a pending confirmation, and ignores a pending one after the final', () => {
    const pending = after(cmd.start(), cmd.reply(0, [OBSERVE, SEND]), cmd.result(SEND, outcome.pending));
    pending.when(cmd.result(SEND, outcome.pending)).then([]);
    expect(pending.when(cmd.result(SEND, outcome.denied)).events).toHaveLength(1);
    after(cmd.start(), cmd.reply(0, [OBSERVE, SEND]), cmd.result(SEND, outcome.denied))
      .when(cmd.result(SEND, outcome.pending))
      .then([]);
  });

  it('refuses a result for a call the conversation never requested', () => {
    asked().when(cmd.result(OTHER, outcome.succeeded)).thenThrows(UnknownToolCallError);
  });

  it('waits for every call of the turn, counting a pending confirmation as a result', () => {
    const one = after(cmd.start(), cmd.reply(0, [OBSERVE, SEND]), cmd.result(SEND, outcome.pending));
    expect(nextAction(one.state, NOW)).toEqual({ kind: 'submit', call_ids: [OBSERVE] });
    const both = after(
      cmd.start(),
      cmd.reply(0, [OBSERVE, SEND]),
      cmd.result(SEND, outcome.pending),
      cmd.result(OBSERVE, outcome.succeeded),
    );
    expect(nextAction(both.state, NOW)).toEqual({ kind: 'call_model', turn: 1 });
  });

  it('is no longer added once the conversation completed', () => {
    after(cmd.start(), cmd.reply(0, [OBSERVE]), cmd.complete())
      .when(cmd.result(OBSERVE, outcome.succeeded))
      .then([]);
  });
});

describe('pause and resume', () => {
  const waitingForOwner = () =>
    after(
      cmd.start(),
      cmd.reply(0, [OBSERVE, SEND]),
      cmd.result(SEND, outcome.pending),
      cmd.result(OBSERVE, outcome.succeeded),
      cmd.reply(1, [], 'Waiting for the owner.'),
    );

  it('pauses after the model answered while an approval is open, listing what it waits on', () => {
    const waiting = waitingForOwner();
    expect(nextAction(waiting.state, NOW)).toEqual({ kind: 'pause' });
    waiting.when(cmd.pause()).then([
      {
        type: E.Paused,
        data: {
          reason: 'awaiting_approval',
          pending: [{ call_id: SEND, approval_id: 'apr_1', summary: 'Send a text to Alice' }],
        },
      },
    ]);
  });

  it('stays paused until the pending call has its final outcome, then resumes and asks the model again', () => {
    const paused = after(
      ...[cmd.start(), cmd.reply(0, [OBSERVE, SEND]), cmd.result(SEND, outcome.pending)],
      cmd.result(OBSERVE, outcome.succeeded),
      cmd.reply(1, [], 'Waiting.'),
      cmd.pause(),
    );
    expect(live(paused.state).status).toBe('paused');
    expect(nextAction(paused.state, NOW)).toEqual({ kind: 'idle' });
    paused.when(cmd.resume()).thenThrows(ConversationStateError);

    const decided = givenState(paused.when(cmd.result(SEND, outcome.denied)).state);
    expect(nextAction(decided.state, NOW)).toEqual({ kind: 'resume' });
    const resumed = decided.when(cmd.resume()).state;
    expect(live(resumed).status).toBe('running');
    expect(nextAction(resumed, NOW)).toEqual({ kind: 'call_model', turn: 2 });
  });

  it('refuses to pause while the model still has to speak', () => {
    after(cmd.start()).when(cmd.pause()).thenThrows(ConversationStateError);
  });

  it('completes with the model’s answer when nothing is pending', () => {
    const { state } = after(cmd.start(), cmd.reply(0, [], 'All done.'));
    expect(nextAction(state, NOW)).toEqual({ kind: 'complete', reason: 'answered', final_text: 'All done.' });
  });
});

describe('bounds', () => {
  it('stops with step_limit when the model has used every turn', () => {
    const commands = [cmd.start()];
    for (let turn = 0; turn < LIMITS.maxSteps; turn++) {
      const id = `call_${String(turn).padStart(32, '0')}`;
      commands.push(cmd.reply(turn, [id]), cmd.result(id, outcome.succeeded));
    }
    const used = after(...commands);
    expect(nextAction(used.state, NOW)).toMatchObject({
      kind: 'complete',
      reason: 'step_limit',
      bound: { bound: 'steps', limit: 4, used: 4 },
    });
    used.when(cmd.reply(LIMITS.maxSteps)).thenThrows(ConversationStateError, /step limit/);
  });

  it('stops with token_limit once the tokens spent reach the limit', () => {
    const { state } = after(
      cmd.start(),
      cmd.reply(0, [OBSERVE], '', LIMITS.maxTokens),
      cmd.result(OBSERVE, outcome.succeeded),
    );
    expect(nextAction(state, NOW)).toMatchObject({
      kind: 'complete',
      reason: 'token_limit',
      bound: { bound: 'tokens', limit: 10_000, used: 10_000 },
    });
  });

  it('stops with time_limit at the deadline instead of starting another model turn', () => {
    const { state } = after(cmd.start());
    expect(nextAction(state, new Date(NOW.getTime() + LIMITS.maxWallTimeMs - 1))).toEqual({
      kind: 'call_model',
      turn: 0,
    });
    expect(nextAction(state, new Date(NOW.getTime() + LIMITS.maxWallTimeMs + 5))).toMatchObject({
      kind: 'complete',
      reason: 'time_limit',
      bound: { bound: 'wall_time', limit: 60_000, used: 60_005 },
    });
  });

  it('stops with tool_limit when a reply asks for more calls than remain, and runs none of them', () => {
    const ids = [
      OBSERVE,
      SEND,
      OTHER,
      'call_00000000000000000000000000000004',
      'call_00000000000000000000000000000005',
    ];
    const { state } = after(cmd.start(), cmd.reply(0, ids));
    expect(live(state).calls).toEqual({});
    expect(nextAction(state, NOW)).toMatchObject({
      kind: 'complete',
      reason: 'tool_limit',
      bound: { bound: 'tool_calls', limit: 4, used: 0 },
    });
  });

  describe('cost', () => {
    // $2 per million input tokens, $10 per million output tokens; the conversation may spend 3 cents.
    const PRICE = { input_usd_per_mtok: 2, output_usd_per_mtok: 10 };
    const startPriced = (maxCostUsd: number | null, price: typeof PRICE | null): ConversationCommand => ({
      type: 'StartConversation',
      data: {
        conversation_id: ID,
        agent_id: 'agent-1',
        model: 'openai:gpt-4o',
        task: 'Tell Alice I am late',
        device_id: 'phone-1',
        limits: { ...LIMITS, maxCostUsd },
        price,
      },
    });
    const spend = (turn: number, callId: string, input: number, output: number): ConversationCommand => ({
      type: 'AddModelReply',
      data: {
        conversation_id: ID,
        turn,
        content: '',
        tool_calls: [{ index: 0, name: 'device.screen_observe', arguments: {}, call_id: callId }],
        usage: { input_tokens: input, output_tokens: output },
      },
    });

    it('records the bound and the price at start, so a later price change does not retarget the conversation', () => {
      const started = given().when(startPriced(0.03, PRICE));
      expect(started.events[0]).toMatchObject({
        data: { limits: { max_cost_usd: 0.03 }, price: PRICE },
      });
      expect(live(started.state).facts.price).toEqual(PRICE);
    });

    it('refuses to start with a cost bound on a model that has no price, since the bound could not be enforced', () => {
      given()
        .when(startPriced(0.03, null))
        .thenThrows(UnpricedModelError, /no price for "openai:gpt-4o"/);
      expect(given().when(startPriced(null, null)).events[0]).not.toHaveProperty('data.price');
    });

    it('counts each turn at the recorded price and stops with cost_limit before the turn that would pass it', () => {
      // 2,000 input and 1,000 output tokens: 0.004 + 0.01 = $0.014 a turn.
      const first = after(
        startPriced(0.03, PRICE),
        spend(0, OBSERVE, 2000, 1000),
        cmd.result(OBSERVE, outcome.succeeded),
      );
      expect(live(first.state).cost_usd).toBeCloseTo(0.014, 10);
      expect(nextAction(first.state, NOW)).toEqual({ kind: 'call_model', turn: 1 });
      const { state } = after(
        startPriced(0.03, PRICE),
        spend(0, OBSERVE, 2000, 1000),
        cmd.result(OBSERVE, outcome.succeeded),
        spend(1, SEND, 2000, 1000),
        cmd.result(SEND, outcome.succeeded),
        spend(2, OTHER, 2000, 1000),
        cmd.result(OTHER, outcome.succeeded),
      );
      const action = nextAction(state, NOW);
      expect(action).toMatchObject({ kind: 'complete', reason: 'cost_limit', bound: { bound: 'cost', limit: 0.03 } });
      expect(action.kind === 'complete' && action.bound?.used).toBeCloseTo(0.042, 10);
      expect(action.kind === 'complete' && action.final_text).toMatch(/spending \$0\.04 .*allows \$0\.03/);
    });

    it('records the bound and its figures in the completion event', () => {
      after(cmd.start())
        .when({
          type: 'CompleteConversation',
          data: {
            conversation_id: ID,
            reason: 'cost_limit',
            final_text: 'The agent stopped.',
            bound: { bound: 'cost', limit: 0.03, used: 0.042 },
          },
        })
        .then([
          {
            type: E.Completed,
            data: {
              reason: 'cost_limit',
              final_text: 'The agent stopped.',
              bound: { bound: 'cost', limit: 0.03, used: 0.042 },
            },
          },
        ]);
    });

    it('leaves the cost at 0 and unbounded for a model without a price and no cost bound', () => {
      const { state } = after(
        startPriced(null, null),
        spend(0, OBSERVE, 2000, 1000),
        cmd.result(OBSERVE, outcome.succeeded),
      );
      expect(live(state).cost_usd).toBe(0);
      expect(nextAction(state, NOW)).toEqual({ kind: 'call_model', turn: 1 });
    });
  });

  it('ignores a reply that arrives after the loop stopped', () => {
    const done = after(cmd.start(), cmd.complete());
    done.when(cmd.reply(0)).then([]);
    done.when(cmd.complete()).then([]);
    expect(nextAction(done.state, NOW)).toEqual({ kind: 'idle' });
  });
});
