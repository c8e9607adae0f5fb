import { ConversationEventType as E, type ConversationEventDraft } from '@ormuz/contracts';
import {
  decide,
  evolve,
  initialState,
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
} from './errors.js';
import { toolResult, type CallOutcomeReport } from './tool-result.js';

const NOW = new Date('2030-01-01T00:00:00.000Z');
const ID = 'conv_1';
const LIMITS = { maxSteps: 4, maxToolCalls: 4, maxTokens: 10_000, maxWallTimeMs: 60_000 };
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

/** Given: the state after these commands were each decided and applied in turn. */
function given(...commands: ConversationCommand[]): ConversationState {
  return commands.reduce((state, c) => decide(c, state, NOW).reduce(evolve, state), initialState);
}

/** When: the events a command produces on that state. */
function when(state: ConversationState, command: ConversationCommand, now = NOW): ConversationEventDraft[] {
  return decide(command, state, now);
}

function live(state: ConversationState): LiveConversation {
  if (state.status === 'absent') throw new Error('expected a started conversation');
  return state;
}

describe('start', () => {
  it('records the facts with a deadline from the wall-time limit, then the task as the first user message', () => {
    const events = when(initialState, cmd.start());
    expect(events).toEqual([
      {
        type: E.Started,
        data: {
          conversation_id: ID,
          agent_id: 'agent-1',
          model: 'scripted:demo',
          task: 'Tell Alice I am late',
          device_id: 'phone-1',
          pinned_tools: [],
          limits: { max_steps: 4, max_tool_calls: 4, max_tokens: 10_000, deadline: '2030-01-01T00:01:00.000Z' },
        },
      },
      {
        type: E.MessageAdded,
        data: { turn: 0, message: { role: 'user', content: 'Tell Alice I am late' }, usage: null },
      },
    ]);
  });

  it('does nothing when the same start is sent again', () => {
    expect(when(given(cmd.start()), cmd.start())).toEqual([]);
  });

  it('refuses a start that reuses the id with a different task, naming the difference', () => {
    expect(() => when(given(cmd.start()), cmd.start('Something else'))).toThrow(ConversationConflictError);
    expect(() => when(given(cmd.start()), cmd.start('Something else'))).toThrow(/different task/);
  });

  it('records pinned tools as facts: the same list repeats, another one conflicts', () => {
    const pinned = given(cmd.start('Tell Alice I am late', ['device.screen_observe']));
    expect(live(pinned).facts.pinned_tools).toEqual(['device.screen_observe']);
    expect(when(pinned, cmd.start('Tell Alice I am late', ['device.screen_observe']))).toEqual([]);
    expect(() => when(pinned, cmd.start())).toThrow(/different pinned_tools/);
  });

  it('reads a start event written before pinning existed as pinning nothing', () => {
    const [started] = when(initialState, cmd.start());
    const { pinned_tools: _none, ...older } = started!.data as unknown as Record<string, unknown>;
    const state = evolve(initialState, { ...started!, data: older } as unknown as ConversationEventDraft);
    expect(live(state).facts.pinned_tools).toEqual([]);
  });

  it('adds only the task when a crash left the start without it', () => {
    const [startedOnly] = when(initialState, cmd.start());
    const state = evolve(initialState, startedOnly!);
    expect(nextAction(state, NOW)).toEqual({ kind: 'idle' });
    expect(when(state, cmd.start()).map((e) => e.type)).toEqual([E.MessageAdded]);
  });

  it('answers not found for any other command on a conversation that never started', () => {
    expect(() => when(initialState, cmd.reply(0))).toThrow(ConversationNotFoundError);
  });

  it('asks for the first model turn once started', () => {
    expect(nextAction(given(cmd.start()), NOW)).toEqual({ kind: 'call_model', turn: 0 });
  });
});

describe('model reply', () => {
  it('records the tool requests with their runtime-issued ids and hands them to policy next', () => {
    const events = when(given(cmd.start()), cmd.reply(0, [OBSERVE, SEND]));
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
    const state = given(cmd.start(), cmd.reply(0, [OBSERVE, SEND]));
    expect(nextAction(state, NOW)).toEqual({ kind: 'submit', call_ids: [OBSERVE, SEND] });
  });

  it('ignores a second reply for a turn that already has one', () => {
    expect(when(given(cmd.start(), cmd.reply(0, [OBSERVE])), cmd.reply(0, [OTHER]))).toEqual([]);
  });

  it("refuses a reply while the turn's tool calls are still outstanding", () => {
    expect(() => when(given(cmd.start(), cmd.reply(0, [OBSERVE])), cmd.reply(1))).toThrow(ConversationStateError);
  });

  it('refuses a reply that uses one call id twice', () => {
    expect(() => when(given(cmd.start()), cmd.reply(0, [OBSERVE, OBSERVE]))).toThrow(InvalidConversationCommandError);
  });
});

describe('tool activation', () => {
  const ACTIVATE = 'call_00000000000000000000000000000009';
  const asked = () => given(cmd.start(), cmd.ask(0, 'ormuz.activate_tool', ACTIVATE));

  it('records the tool an activate_tool call activated, for every later turn', () => {
    expect(when(asked(), cmd.activate(ACTIVATE))).toEqual([
      { type: E.ToolActivated, data: { call_id: ACTIVATE, tool: 'device.send_message', version: 1 } },
    ]);
    expect(
      live(given(cmd.start(), cmd.ask(0, 'ormuz.activate_tool', ACTIVATE), cmd.activate(ACTIVATE))).activated,
    ).toEqual({
      'device.send_message': 1,
    });
  });

  it('is a no-op when repeated, and the newer version stands when the grant moved', () => {
    const activated = given(cmd.start(), cmd.ask(0, 'ormuz.activate_tool', ACTIVATE), cmd.activate(ACTIVATE));
    expect(when(activated, cmd.activate(ACTIVATE))).toEqual([]);
    const moved = given(
      cmd.start(),
      cmd.ask(0, 'ormuz.activate_tool', ACTIVATE),
      cmd.activate(ACTIVATE),
      cmd.activate(ACTIVATE, 'device.send_message', 2),
    );
    expect(live(moved).activated).toEqual({ 'device.send_message': 2 });
  });

  it('leaves the phase alone: the activation call still waits for its own result', () => {
    const activated = given(cmd.start(), cmd.ask(0, 'ormuz.activate_tool', ACTIVATE), cmd.activate(ACTIVATE));
    expect(nextAction(activated, NOW)).toEqual({ kind: 'submit', call_ids: [ACTIVATE] });
  });

  it('refuses an activation by a call the conversation never made, or by another tool', () => {
    expect(() => when(asked(), cmd.activate(OTHER))).toThrow(UnknownToolCallError);
    const observed = given(cmd.start(), cmd.reply(0, [OBSERVE]));
    expect(() => when(observed, cmd.activate(OBSERVE))).toThrow(/not ormuz\.activate_tool/);
    expect(() => when(asked(), cmd.activate(ACTIVATE, 'device.tap', 0))).toThrow(InvalidConversationCommandError);
  });
});

describe('tool result', () => {
  const asked = () => given(cmd.start(), cmd.reply(0, [OBSERVE, SEND]));

  it('is added as a tool message of its call’s turn, with its provenance', () => {
    const [event] = when(asked(), cmd.result(OBSERVE, outcome.succeeded));
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
    const state = given(cmd.start(), cmd.reply(0, [OBSERVE, SEND]), cmd.result(OBSERVE, outcome.succeeded));
    expect(when(state, cmd.result(OBSERVE, outcome.succeeded))).toEqual([]);
  });

  it('keeps the final result after a pending confirmation, and ignores a pending one after the final', () => {
    const pending = given(cmd.start(), cmd.reply(0, [OBSERVE, SEND]), cmd.result(SEND, outcome.pending));
    expect(when(pending, cmd.result(SEND, outcome.pending))).toEqual([]);
    expect(when(pending, cmd.result(SEND, outcome.denied))).toHaveLength(1);
    const final = given(cmd.start(), cmd.reply(0, [OBSERVE, SEND]), cmd.result(SEND, outcome.denied));
    expect(when(final, cmd.result(SEND, outcome.pending))).toEqual([]);
  });

  it('refuses a result for a call the conversation never requested', () => {
    expect(() => when(asked(), cmd.result(OTHER, outcome.succeeded))).toThrow(UnknownToolCallError);
  });

  it('waits for every call of the turn, counting a pending confirmation as a result', () => {
    const one = given(cmd.start(), cmd.reply(0, [OBSERVE, SEND]), cmd.result(SEND, outcome.pending));
    expect(nextAction(one, NOW)).toEqual({ kind: 'submit', call_ids: [OBSERVE] });
    const both = given(
      cmd.start(),
      cmd.reply(0, [OBSERVE, SEND]),
      cmd.result(SEND, outcome.pending),
      cmd.result(OBSERVE, outcome.succeeded),
    );
    expect(nextAction(both, NOW)).toEqual({ kind: 'call_model', turn: 1 });
  });

  it('is no longer added once the conversation completed', () => {
    const done = given(cmd.start(), cmd.reply(0, [OBSERVE]), cmd.complete());
    expect(when(done, cmd.result(OBSERVE, outcome.succeeded))).toEqual([]);
  });
});

describe('pause and resume', () => {
  const waitingForOwner = () =>
    given(
      cmd.start(),
      cmd.reply(0, [OBSERVE, SEND]),
      cmd.result(SEND, outcome.pending),
      cmd.result(OBSERVE, outcome.succeeded),
      cmd.reply(1, [], 'Waiting for the owner.'),
    );

  it('pauses after the model answered while an approval is open, listing what it waits on', () => {
    const state = waitingForOwner();
    expect(nextAction(state, NOW)).toEqual({ kind: 'pause' });
    expect(when(state, cmd.pause())).toEqual([
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
    const paused = given(
      ...[cmd.start(), cmd.reply(0, [OBSERVE, SEND]), cmd.result(SEND, outcome.pending)],
      cmd.result(OBSERVE, outcome.succeeded),
      cmd.reply(1, [], 'Waiting.'),
      cmd.pause(),
    );
    expect(live(paused).status).toBe('paused');
    expect(nextAction(paused, NOW)).toEqual({ kind: 'idle' });
    expect(() => when(paused, cmd.resume())).toThrow(ConversationStateError);

    const decided = [...when(paused, cmd.result(SEND, outcome.denied))].reduce(evolve, paused);
    expect(nextAction(decided, NOW)).toEqual({ kind: 'resume' });
    const resumed = when(decided, cmd.resume()).reduce(evolve, decided);
    expect(live(resumed).status).toBe('running');
    expect(nextAction(resumed, NOW)).toEqual({ kind: 'call_model', turn: 2 });
  });

  it('refuses to pause while the model still has to speak', () => {
    expect(() => when(given(cmd.start()), cmd.pause())).toThrow(ConversationStateError);
  });

  it('completes with the model’s answer when nothing is pending', () => {
    const state = given(cmd.start(), cmd.reply(0, [], 'All done.'));
    expect(nextAction(state, NOW)).toEqual({ kind: 'complete', reason: 'answered', final_text: 'All done.' });
  });
});

describe('bounds', () => {
  it('stops with step_limit when the model has used every turn', () => {
    let state = given(cmd.start());
    for (let turn = 0; turn < LIMITS.maxSteps; turn++) {
      const id = `call_${String(turn).padStart(32, '0')}`;
      state = [cmd.reply(turn, [id]), cmd.result(id, outcome.succeeded)].reduce(
        (s, c) => decide(c, s, NOW).reduce(evolve, s),
        state,
      );
    }
    expect(nextAction(state, NOW)).toMatchObject({ kind: 'complete', reason: 'step_limit' });
    expect(() => when(state, cmd.reply(LIMITS.maxSteps))).toThrow(/step limit/);
  });

  it('stops with token_limit once the tokens spent reach the limit', () => {
    const state = given(
      cmd.start(),
      cmd.reply(0, [OBSERVE], '', LIMITS.maxTokens),
      cmd.result(OBSERVE, outcome.succeeded),
    );
    expect(nextAction(state, NOW)).toMatchObject({ kind: 'complete', reason: 'token_limit' });
  });

  it('stops with time_limit at the deadline instead of starting another model turn', () => {
    const state = given(cmd.start());
    expect(nextAction(state, new Date(NOW.getTime() + LIMITS.maxWallTimeMs - 1))).toEqual({
      kind: 'call_model',
      turn: 0,
    });
    expect(nextAction(state, new Date(NOW.getTime() + LIMITS.maxWallTimeMs))).toMatchObject({
      kind: 'complete',
      reason: 'time_limit',
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
    const state = given(cmd.start(), cmd.reply(0, ids));
    expect(live(state).calls).toEqual({});
    expect(nextAction(state, NOW)).toMatchObject({ kind: 'complete', reason: 'tool_limit' });
  });

  it('ignores a reply that arrives after the loop stopped', () => {
    const done = given(cmd.start(), cmd.complete());
    expect(when(done, cmd.reply(0))).toEqual([]);
    expect(when(done, cmd.complete())).toEqual([]);
    expect(nextAction(done, NOW)).toEqual({ kind: 'idle' });
  });
});
