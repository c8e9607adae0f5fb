/**
 * The conversation decider: pure `initialState`, `evolve` and `decide`, plus `nextAction`, which says what the agent
 * loop must do next. No I/O, no clock (time is passed in), no framework.
 *
 * The loop, in the six steps of tool calling: the model is called (`call_model`), its reply is recorded
 * (`AddModelReply`), every tool request in it is handed to policy (`submit`), results come back as tool messages
 * (`AddToolResult`), and once no call of the turn is outstanding the model is called again. A staged call gets an
 * interim `pending_confirmation` result; when the model has answered and only owner decisions remain, the loop pauses,
 * and it resumes once every pending call has its final result. Bounds (model turns, tool calls, tokens, wall time)
 * are checked here, in code, before each model turn. A request the model's adapter found unusable (arguments that are
 * not JSON, a tool never offered, one past the per-turn bound) is answered with its `rejected` result in the same
 * decision as the reply, so it is never outstanding and never submitted.
 *
 * Tools activated with `ormuz.activate_tool` are recorded here (`ActivateTool`), so every later model turn is sent
 * their full schemas; which schemas a turn gets is otherwise chosen per turn (see `@ormuz/tool-payload`), not stored.
 *
 * `decide` returns `[]` for a command that repeats what is already recorded (a second start with the same facts, a
 * reply for a turn already answered, a second result for a call), so the loop driver can retry any step after a crash.
 */
import {
  ConversationEventType as E,
  isConversationEvent,
  type BoundReachedV1,
  type CompletionReasonV1,
  type ConversationEventDraft,
  type ModelPriceV1,
  type ModelStopReasonV1,
  type ConversationLimitsV1,
  type PendingConfirmationV1,
  type RequestedToolCallV1,
  type TokenUsageV1,
  type ToolResultProvenanceV1,
} from '@ormuz/contracts';
import {
  ConversationConflictError,
  ConversationNotFoundError,
  ConversationStateError,
  InvalidConversationCommandError,
  UnknownToolCallError,
  UnpricedModelError,
} from './errors.js';

// ---------------------------------------------------------------------------------------------------------------
// State
// ---------------------------------------------------------------------------------------------------------------

/** Version of the state's shape; snapshots of another version are ignored and the state is rebuilt from events. */
export const CONVERSATION_STATE_VERSION = 3;

/** What a conversation was started with; fixed for its life. */
export interface ConversationFacts {
  readonly conversation_id: string;
  readonly agent_id: string;
  readonly model: string;
  readonly task: string;
  readonly device_id: string | null;
  /** Tools the owner pinned at start (canonical names); `[]` when none. */
  readonly pinned_tools: readonly string[];
  /** The model's price when the conversation started; `null` when it had none (cost unknown). */
  readonly price: ModelPriceV1 | null;
}

/** The tool the activation call names: the core tool whose successful run records an activation. */
export const ACTIVATE_TOOL = 'ormuz.activate_tool';

/** A tool request of a model reply, as the loop tracks it. */
export interface TrackedCall {
  readonly turn: number;
  readonly index: number;
  readonly tool: string;
  /** `none`: no result yet (outstanding); `interim`: pending confirmation; `final`: the call's last word. */
  readonly result: 'none' | 'interim' | 'final';
  /** The open approval while `interim`; otherwise `null`. */
  readonly approval: { readonly approval_id: string; readonly summary: string } | null;
}

/**
 * Whose move it is. `model`: the model must be called. `tools`: the last reply asked for tools and some have no
 * result yet. `answered`: the last reply asked for nothing; the loop completes, or pauses while approvals are open.
 */
export type ConversationPhase = 'model' | 'tools' | 'answered';

/** A conversation with at least a start event. */
export interface LiveConversation {
  readonly status: 'running' | 'paused' | 'completed';
  readonly facts: ConversationFacts;
  readonly limits: ConversationLimitsV1;
  /** False only in the instant between the start event and the task message (a crash there is healed by a re-start). */
  readonly has_task: boolean;
  /** Model replies recorded; also the 0-based number of the next model turn. */
  readonly turns: number;
  readonly phase: ConversationPhase;
  readonly tool_calls_used: number;
  /** The last reply asked for more tool calls than the conversation allows; none of them was tracked or run. */
  readonly tool_budget_exceeded: boolean;
  readonly tokens_used: number;
  /** US dollars spent on the model, from `facts.price`; 0 when the price is unknown. */
  readonly cost_usd: number;
  /** Every tool request by call id, in request order. */
  readonly calls: Readonly<Record<string, TrackedCall>>;
  /** Tools activated with `ormuz.activate_tool`: canonical name → the version offered when it was activated. */
  readonly activated: Readonly<Record<string, number>>;
  /** Content of the most recent model reply. */
  readonly last_reply: string;
  readonly completion: {
    readonly reason: CompletionReasonV1;
    readonly final_text: string;
    readonly bound: BoundReachedV1 | null;
  } | null;
}

export type ConversationState = { readonly status: 'absent' } | LiveConversation;

/** The state of a conversation with no events. */
export const initialState: ConversationState = Object.freeze({ status: 'absent' });

/** The loop's bounds as configured; the wall time becomes a deadline when the conversation starts. */
export interface ConversationLimits {
  readonly maxSteps: number;
  readonly maxToolCalls: number;
  readonly maxTokens: number;
  /** Milliseconds from the start after which no model turn starts. */
  readonly maxWallTimeMs: number;
  /** Most US dollars spent on the model; `null` for no cost bound. */
  readonly maxCostUsd: number | null;
}

/** US dollars one model turn cost at `price`. */
export function costOf(usage: TokenUsageV1, price: ModelPriceV1): number {
  return (usage.input_tokens * price.input_usd_per_mtok + usage.output_tokens * price.output_usd_per_mtok) / 1_000_000;
}

// ---------------------------------------------------------------------------------------------------------------
// Commands
// ---------------------------------------------------------------------------------------------------------------

/** Begin a conversation: record its facts and the task as the first user message. */
export interface StartConversation {
  readonly type: 'StartConversation';
  readonly data: Omit<ConversationFacts, 'pinned_tools' | 'price'> & {
    readonly limits: ConversationLimits;
    /** Default `[]`. */
    readonly pinned_tools?: readonly string[];
    /** The model's price from the price table; `null` (or absent) when it has none. Needed for a cost bound. */
    readonly price?: ModelPriceV1 | null;
  };
}

/**
 * Record the model's reply for `turn`; each tool request already carries its runtime-issued call id. `rejected` holds
 * the results of requests the loop refuses itself (arguments that are not JSON, a tool never offered): they are
 * recorded with the reply, in the same decision, so no restart can ever submit them.
 */
export interface AddModelReply {
  readonly type: 'AddModelReply';
  readonly data: {
    readonly conversation_id: string;
    readonly turn: number;
    readonly content: string;
    readonly tool_calls: readonly RequestedToolCallV1[];
    readonly usage: TokenUsageV1;
    /** Why the model stopped, when its provider said. */
    readonly stop_reason?: ModelStopReasonV1;
    /** `rejected` results for requests of this reply that are never submitted; default none. */
    readonly rejected?: readonly {
      readonly call_id: string;
      readonly content: string;
      readonly provenance: ToolResultProvenanceV1;
    }[];
  };
}

/** Record a call's result. At most one interim and one final result per call; repeats are no-ops. */
export interface AddToolResult {
  readonly type: 'AddToolResult';
  readonly data: {
    readonly conversation_id: string;
    readonly call_id: string;
    readonly content: string;
    readonly provenance: ToolResultProvenanceV1;
  };
}

/** Wait for the owner: allowed once the model has answered and only pending confirmations remain. */
export interface PauseConversation {
  readonly type: 'PauseConversation';
  readonly data: { readonly conversation_id: string };
}

/** Continue after every pending confirmation got its final result. */
export interface ResumeConversation {
  readonly type: 'ResumeConversation';
  readonly data: { readonly conversation_id: string; readonly reason: string };
}

/**
 * Record that `ormuz.activate_tool` call `call_id` activated `tool` at `version`. The call must be one this
 * conversation requested, of that tool. Activating a tool again at the same version is a no-op; at another version
 * (the grant moved) the newer record stands.
 */
export interface ActivateTool {
  readonly type: 'ActivateTool';
  readonly data: {
    readonly conversation_id: string;
    readonly call_id: string;
    readonly tool: string;
    readonly version: number;
  };
}

/** Stop the loop for good: the model answered, a bound was reached, or the model kept failing. */
export interface CompleteConversation {
  readonly type: 'CompleteConversation';
  readonly data: {
    readonly conversation_id: string;
    readonly reason: CompletionReasonV1;
    readonly final_text: string;
    /** The bound that stopped the loop, with its figures; absent when none did. */
    readonly bound?: BoundReachedV1;
  };
}

export type ConversationCommand =
  | StartConversation
  | AddModelReply
  | AddToolResult
  | ActivateTool
  | PauseConversation
  | ResumeConversation
  | CompleteConversation;

// ---------------------------------------------------------------------------------------------------------------
// Queries over the state
// ---------------------------------------------------------------------------------------------------------------

/** Calls of this conversation with no result yet, in request order. */
export function outstandingCalls(state: LiveConversation): string[] {
  return Object.entries(state.calls)
    .filter(([, c]) => c.result === 'none')
    .map(([id]) => id);
}

/** Staged calls waiting for the owner, in request order. */
export function pendingConfirmations(state: LiveConversation): PendingConfirmationV1[] {
  return Object.entries(state.calls).flatMap(([call_id, c]) =>
    c.result === 'interim' && c.approval
      ? [{ call_id, approval_id: c.approval.approval_id, summary: c.approval.summary }]
      : [],
  );
}

// ---------------------------------------------------------------------------------------------------------------
// evolve
// ---------------------------------------------------------------------------------------------------------------

/** Applies one event. Trusts the log's order; an event that cannot apply to the state throws. */
export function evolve(state: ConversationState, event: ConversationEventDraft): ConversationState {
  if (event.type === E.Started) {
    const d = event.data;
    return {
      status: 'running',
      facts: {
        conversation_id: d.conversation_id,
        agent_id: d.agent_id,
        model: d.model,
        task: d.task,
        device_id: d.device_id,
        pinned_tools: d.pinned_tools ?? [],
        price: d.price ?? null,
      },
      limits: d.limits,
      has_task: false,
      turns: 0,
      phase: 'model',
      tool_calls_used: 0,
      tool_budget_exceeded: false,
      tokens_used: 0,
      cost_usd: 0,
      calls: {},
      activated: {},
      last_reply: '',
      completion: null,
    };
  }
  if (state.status === 'absent') throw new Error(`conversation event ${event.type} precedes its start event`);
  switch (event.type) {
    case E.MessageAdded:
      return withMessage(state, event.data);
    case E.Paused:
      return { ...state, status: 'paused' };
    case E.Resumed:
      return { ...state, status: 'running' };
    case E.Completed:
      return {
        ...state,
        status: 'completed',
        completion: { reason: event.data.reason, final_text: event.data.final_text, bound: event.data.bound ?? null },
      };
    case E.ToolActivated:
      return { ...state, activated: { ...state.activated, [event.data.tool]: event.data.version } };
    default:
      return assertNever(event);
  }
}

function withMessage(
  state: LiveConversation,
  d: Extract<ConversationEventDraft, { type: typeof E.MessageAdded }>['data'],
): LiveConversation {
  const m = d.message;
  switch (m.role) {
    case 'user':
      return { ...state, has_task: true };
    case 'system':
      return state;
    case 'assistant': {
      const requested = m.tool_calls ?? [];
      const base = {
        ...state,
        turns: d.turn + 1,
        tokens_used: state.tokens_used + (d.usage ? d.usage.input_tokens + d.usage.output_tokens : 0),
        cost_usd: state.cost_usd + (d.usage && state.facts.price ? costOf(d.usage, state.facts.price) : 0),
        last_reply: m.content,
      };
      if (requested.length === 0) return { ...base, phase: 'answered' };
      if (state.tool_calls_used + requested.length > state.limits.max_tool_calls) {
        return { ...base, phase: 'answered', tool_budget_exceeded: true };
      }
      const calls = { ...state.calls };
      for (const c of requested)
        calls[c.call_id] = { turn: d.turn, index: c.index, tool: c.name, result: 'none', approval: null };
      return { ...base, phase: 'tools', calls, tool_calls_used: state.tool_calls_used + requested.length };
    }
    case 'tool': {
      const p = m.provenance;
      const known = p ? state.calls[p.call_id] : undefined;
      if (!p || !known) throw new Error(`tool result for a call the conversation never requested (${m.tool_call_id})`);
      const interim = p.status === 'pending_confirmation';
      const calls = {
        ...state.calls,
        [p.call_id]: {
          ...known,
          result: interim ? 'interim' : 'final',
          approval: interim ? p.approval : null,
        } as TrackedCall,
      };
      const next = { ...state, calls };
      const outstanding = outstandingCalls(next).length > 0;
      const pending = pendingConfirmations(next).length > 0;
      // The model speaks again once the turn's calls all have a result, or (after it answered) once the last
      // approval it was waiting on has its final outcome.
      const phase =
        (state.phase === 'tools' && !outstanding) ||
        (state.phase === 'answered' && !interim && !pending && !outstanding)
          ? 'model'
          : state.phase;
      return { ...next, phase };
    }
    default:
      return assertNever(m.role);
  }
}

// ---------------------------------------------------------------------------------------------------------------
// decide
// ---------------------------------------------------------------------------------------------------------------

/**
 * The events `command` produces against `state` at `now`; `[]` when it repeats what is recorded. Throws a domain
 * error ({@link ConversationStateError} and friends) when the command does not fit the state.
 */
export function decide(command: ConversationCommand, state: ConversationState, now: Date): ConversationEventDraft[] {
  if (command.type === 'StartConversation') return start(command, state, now);
  if (state.status === 'absent') throw new ConversationNotFoundError(command.data.conversation_id);
  if (command.data.conversation_id !== state.facts.conversation_id) {
    throw new InvalidConversationCommandError(
      command.type,
      `it names conversation ${command.data.conversation_id} but was decided against ${state.facts.conversation_id}`,
    );
  }
  switch (command.type) {
    case 'AddModelReply':
      return addModelReply(command, state);
    case 'AddToolResult':
      return addToolResult(command, state);
    case 'ActivateTool':
      return activateTool(command, state);
    case 'PauseConversation':
      return pause(state);
    case 'ResumeConversation':
      return resume(command, state);
    case 'CompleteConversation':
      return complete(command, state);
    default:
      return assertNever(command);
  }
}

function start({ data: d }: StartConversation, state: ConversationState, now: Date): ConversationEventDraft[] {
  const taskMessage: ConversationEventDraft = {
    type: E.MessageAdded,
    data: { turn: 0, message: { role: 'user', content: d.task }, usage: null },
  };
  const pinned = [...new Set(d.pinned_tools ?? [])];
  if (state.status !== 'absent') {
    const differences: string[] = (['agent_id', 'model', 'task', 'device_id'] as const).filter(
      (k) => state.facts[k] !== d[k],
    );
    if (!sameList(state.facts.pinned_tools, pinned)) differences.push('pinned_tools');
    if (differences.length > 0) throw new ConversationConflictError(d.conversation_id, differences);
    return state.has_task ? [] : [taskMessage];
  }
  const { maxSteps, maxToolCalls, maxTokens, maxWallTimeMs, maxCostUsd } = d.limits;
  if (
    !(maxSteps >= 1 && maxToolCalls >= 0 && maxTokens >= 1 && maxWallTimeMs >= 1) ||
    (maxCostUsd !== null && !(maxCostUsd >= 0))
  ) {
    throw new InvalidConversationCommandError(
      'StartConversation',
      'every limit must be positive (tool calls and cost may be 0)',
    );
  }
  const price = d.price ?? null;
  if (maxCostUsd !== null && price === null) throw new UnpricedModelError(d.model, maxCostUsd);
  return [
    {
      type: E.Started,
      data: {
        conversation_id: d.conversation_id,
        agent_id: d.agent_id,
        model: d.model,
        task: d.task,
        device_id: d.device_id,
        pinned_tools: pinned,
        limits: {
          max_steps: maxSteps,
          max_tool_calls: maxToolCalls,
          max_tokens: maxTokens,
          deadline: new Date(now.getTime() + maxWallTimeMs).toISOString(),
          max_wall_time_ms: maxWallTimeMs,
          ...(maxCostUsd !== null ? { max_cost_usd: maxCostUsd } : {}),
        },
        ...(price ? { price } : {}),
      },
    },
    taskMessage,
  ];
}

function addModelReply({ data: d }: AddModelReply, s: LiveConversation): ConversationEventDraft[] {
  // A reply for a turn already recorded, or arriving after the loop stopped, is a racing retry: the first one stands.
  if (s.status === 'completed' || d.turn < s.turns) return [];
  const id = s.facts.conversation_id;
  if (d.turn > s.turns) {
    throw new ConversationStateError(
      id,
      s.status,
      'AddModelReply',
      `turn ${d.turn} comes after turn ${s.turns}, which has no reply yet`,
    );
  }
  if (s.status === 'paused' || s.phase !== 'model' || !s.has_task) {
    throw new ConversationStateError(id, s.status, 'AddModelReply', `it is not the model's turn (phase ${s.phase})`);
  }
  if (s.turns >= s.limits.max_steps) {
    throw new ConversationStateError(
      id,
      s.status,
      'AddModelReply',
      `the step limit of ${s.limits.max_steps} model turns is reached`,
    );
  }
  d.tool_calls.forEach((c, i) => {
    if (c.index !== i)
      throw new InvalidConversationCommandError('AddModelReply', `tool call ${i} has index ${c.index}`);
    if (s.calls[c.call_id] || d.tool_calls.findIndex((o) => o.call_id === c.call_id) !== i) {
      throw new InvalidConversationCommandError('AddModelReply', `call id ${c.call_id} is used twice`);
    }
  });
  if (d.tool_calls.length === 0 && d.content.length === 0) {
    throw new InvalidConversationCommandError('AddModelReply', 'a reply without tool calls must have content');
  }
  // Past the tool budget nothing of the reply is tracked or run (the loop completes), so no result is recorded either.
  const overBudget = s.tool_calls_used + d.tool_calls.length > s.limits.max_tool_calls;
  const rejected = d.rejected ?? [];
  rejected.forEach((r, i) => {
    if (
      !d.tool_calls.some((c) => c.call_id === r.call_id) ||
      rejected.findIndex((o) => o.call_id === r.call_id) !== i
    ) {
      throw new InvalidConversationCommandError(
        'AddModelReply',
        `rejected call ${r.call_id} is not a request of this reply, or is listed twice`,
      );
    }
    if (r.provenance.call_id !== r.call_id || r.provenance.status !== 'rejected') {
      throw new InvalidConversationCommandError(
        'AddModelReply',
        `the result of ${r.call_id} must be its own rejected result`,
      );
    }
  });
  return [
    {
      type: E.MessageAdded,
      data: {
        turn: d.turn,
        message:
          d.tool_calls.length > 0
            ? { role: 'assistant', content: d.content, tool_calls: d.tool_calls }
            : { role: 'assistant', content: d.content },
        usage: { input_tokens: d.usage.input_tokens, output_tokens: d.usage.output_tokens },
        ...(d.stop_reason ? { stop_reason: d.stop_reason } : {}),
      },
    },
    ...(overBudget ? [] : rejected).map((r): ConversationEventDraft => ({
      type: E.MessageAdded,
      data: {
        turn: d.turn,
        message: { role: 'tool', content: r.content, tool_call_id: r.call_id, provenance: r.provenance },
        usage: null,
      },
    })),
  ];
}

function addToolResult({ data: d }: AddToolResult, s: LiveConversation): ConversationEventDraft[] {
  const id = s.facts.conversation_id;
  const call = s.calls[d.call_id];
  if (!call) throw new UnknownToolCallError(id, d.call_id);
  if (d.provenance.call_id !== d.call_id) {
    throw new InvalidConversationCommandError(
      'AddToolResult',
      `the provenance names call ${d.provenance.call_id}, not ${d.call_id}`,
    );
  }
  const interim = d.provenance.status === 'pending_confirmation';
  if (interim && !d.provenance.approval) {
    throw new InvalidConversationCommandError('AddToolResult', 'a pending confirmation must name its approval');
  }
  // The conversation's own record ends with it; the call's later facts stay on the calls stream.
  if (s.status === 'completed') return [];
  if (call.result === 'final' || (interim && call.result === 'interim')) return [];
  return [
    {
      type: E.MessageAdded,
      data: {
        turn: call.turn,
        message: { role: 'tool', content: d.content, tool_call_id: d.call_id, provenance: d.provenance },
        usage: null,
      },
    },
  ];
}

function activateTool({ data: d }: ActivateTool, s: LiveConversation): ConversationEventDraft[] {
  const call = s.calls[d.call_id];
  if (!call) throw new UnknownToolCallError(s.facts.conversation_id, d.call_id);
  if (call.tool !== ACTIVATE_TOOL) {
    throw new InvalidConversationCommandError(
      'ActivateTool',
      `call ${d.call_id} is a ${call.tool} call, not ${ACTIVATE_TOOL}`,
    );
  }
  if (!Number.isInteger(d.version) || d.version < 1) {
    throw new InvalidConversationCommandError('ActivateTool', `version ${d.version} is not a positive whole number`);
  }
  if (s.status === 'completed' || s.activated[d.tool] === d.version) return [];
  return [{ type: E.ToolActivated, data: { call_id: d.call_id, tool: d.tool, version: d.version } }];
}

function pause(s: LiveConversation): ConversationEventDraft[] {
  if (s.status === 'paused') return [];
  const pending = pendingConfirmations(s);
  if (s.status === 'completed' || s.phase !== 'answered' || pending.length === 0 || outstandingCalls(s).length > 0) {
    throw new ConversationStateError(
      s.facts.conversation_id,
      s.status,
      'PauseConversation',
      'a conversation pauses only after the model answered while approvals are still open',
    );
  }
  return [{ type: E.Paused, data: { reason: 'awaiting_approval', pending } }];
}

function resume({ data: d }: ResumeConversation, s: LiveConversation): ConversationEventDraft[] {
  if (s.status === 'running') return [];
  if (s.status === 'completed' || pendingConfirmations(s).length > 0) {
    throw new ConversationStateError(
      s.facts.conversation_id,
      s.status,
      'ResumeConversation',
      'a paused conversation resumes only once every pending confirmation has its final result',
    );
  }
  return [{ type: E.Resumed, data: { reason: d.reason } }];
}

function complete({ data: d }: CompleteConversation, s: LiveConversation): ConversationEventDraft[] {
  if (s.status === 'completed') return [];
  return [
    {
      type: E.Completed,
      data: { reason: d.reason, final_text: d.final_text, ...(d.bound ? { bound: d.bound } : {}) },
    },
  ];
}

// ---------------------------------------------------------------------------------------------------------------
// nextAction: the loop's process manager, pure
// ---------------------------------------------------------------------------------------------------------------

/** What the loop driver must do next for a conversation. */
export type LoopAction =
  /** Nothing until something new arrives (an outcome, an owner's decision, a re-sent start). */
  | { readonly kind: 'idle' }
  /** Hand these calls to policy (again: a re-submit of a recorded call observes the original). */
  | { readonly kind: 'submit'; readonly call_ids: readonly string[] }
  | { readonly kind: 'call_model'; readonly turn: number }
  | { readonly kind: 'pause' }
  | { readonly kind: 'resume' }
  | {
      readonly kind: 'complete';
      readonly reason: CompletionReasonV1;
      readonly final_text: string;
      /** The bound reached, with its figures; absent when the model answered. */
      readonly bound?: BoundReachedV1;
    };

/** The next step of the loop for `state` at `now`. Bounds are enforced here, before each model turn. */
export function nextAction(state: ConversationState, now: Date): LoopAction {
  switch (state.status) {
    case 'absent':
    case 'completed':
      return { kind: 'idle' };
    case 'paused':
      return pendingConfirmations(state).length === 0 ? { kind: 'resume' } : { kind: 'idle' };
    case 'running':
      return nextWhileRunning(state, now);
    default:
      return assertNever(state);
  }
}

function nextWhileRunning(s: LiveConversation, now: Date): LoopAction {
  if (!s.has_task) return { kind: 'idle' };
  const l = s.limits;
  if (s.tool_budget_exceeded) {
    return {
      kind: 'complete',
      reason: 'tool_limit',
      final_text:
        `The agent stopped: its last reply asked for more tool calls than this conversation allows ` +
        `(${l.max_tool_calls} in all, ${s.tool_calls_used} already used), so nothing from that reply was run.`,
      bound: { bound: 'tool_calls', limit: l.max_tool_calls, used: s.tool_calls_used },
    };
  }
  const outstanding = outstandingCalls(s);
  if (outstanding.length > 0) return { kind: 'submit', call_ids: outstanding };
  switch (s.phase) {
    case 'answered':
      return pendingConfirmations(s).length > 0
        ? { kind: 'pause' }
        : { kind: 'complete', reason: 'answered', final_text: s.last_reply };
    case 'tools':
    case 'model':
      if (s.turns >= l.max_steps) {
        return {
          kind: 'complete',
          reason: 'step_limit',
          final_text: `The agent stopped after ${l.max_steps} model turns, this conversation's limit, before giving a final answer.`,
          bound: { bound: 'steps', limit: l.max_steps, used: s.turns },
        };
      }
      if (s.tokens_used >= l.max_tokens) {
        return {
          kind: 'complete',
          reason: 'token_limit',
          final_text: `The agent stopped after using ${s.tokens_used} model tokens (this conversation allows ${l.max_tokens}) before giving a final answer.`,
          bound: { bound: 'tokens', limit: l.max_tokens, used: s.tokens_used },
        };
      }
      if (l.max_cost_usd !== undefined && s.cost_usd >= l.max_cost_usd) {
        return {
          kind: 'complete',
          reason: 'cost_limit',
          final_text: `The agent stopped after spending ${usd(s.cost_usd)} on the model (this conversation allows ${usd(l.max_cost_usd)}) before giving a final answer.`,
          bound: { bound: 'cost', limit: l.max_cost_usd, used: s.cost_usd },
        };
      }
      if (now.getTime() >= Date.parse(l.deadline)) {
        return {
          kind: 'complete',
          reason: 'time_limit',
          final_text: `The agent stopped at ${l.deadline}, when this conversation's time ran out, before giving a final answer.`,
          ...(l.max_wall_time_ms !== undefined
            ? {
                bound: {
                  bound: 'wall_time',
                  limit: l.max_wall_time_ms,
                  used: now.getTime() - (Date.parse(l.deadline) - l.max_wall_time_ms),
                },
              }
            : {}),
        };
      }
      return { kind: 'call_model', turn: s.turns };
    default:
      return assertNever(s.phase);
  }
}

// ---------------------------------------------------------------------------------------------------------------
// helpers
// ---------------------------------------------------------------------------------------------------------------

/** Dollars as people read them: cents, or more digits for sums under a cent. */
function usd(amount: number): string {
  return amount >= 0.01 || amount === 0 ? `$${amount.toFixed(2)}` : `$${amount.toPrecision(2)}`;
}

function sameList(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

function assertNever(value: never): never {
  throw new Error(`unhandled conversation variant ${JSON.stringify(value)}`);
}

/** The decider as one value, in the shape the event log's command runner takes. */
export const conversationDecider = Object.freeze({
  initialState,
  evolve,
  decide,
  stateVersion: CONVERSATION_STATE_VERSION,
  isEvent: isConversationEvent,
});
