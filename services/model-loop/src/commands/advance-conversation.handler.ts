import { Inject } from '@nestjs/common';
import { Command, CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import {
  MAX_MESSAGE_CHARS,
  MAX_TOOL_CALLS_PER_REPLY,
  type ConversationMessageV1,
  type OfferedToolV1,
  type RequestedToolCallV1,
} from '@ormuz/contracts';
import { INFRA, type Infrastructure } from '@ormuz/service-kit';
import {
  EXECUTE_TOOL,
  GEN_AI_AGENT_ID,
  GEN_AI_CONVERSATION_ID,
  GEN_AI_OPERATION_NAME,
  GEN_AI_TOOL_TYPE,
  inSpan,
  linksTo,
  ORMUZ_CALL_STATUS,
  ORMUZ_DEVICE_ID,
  toolCallAttributes,
} from '@ormuz/tracing';
import { tokenCounter, tokenCounterFor, turnPayload } from '@ormuz/tool-payload';
import { configuredPins, MODEL_LOOP_CONFIG, type ModelLoopConfig } from '../config.js';
import {
  nextAction,
  type ConversationCommand,
  type LiveConversation,
  type LoopAction,
} from '../domain/conversation.js';
import {
  describeDayBound,
  isConversationStateError,
  isTenantDaySpentError,
  ModelUnavailableError,
  type TenantDaySpentError,
} from '../domain/errors.js';
import { ModelProviders, type ModelProvider, type ModelReply, type ModelRequest } from '../domain/model-provider.js';
import { turnText } from '../domain/turn-text.js';
import { contextOfTurn, conversationTaint, ownerDenials } from '../domain/taint.js';
import { toolResult, type CallOutcomeReport } from '@ormuz/tool-call';
import { Conversations, type ConversationRecord } from '../persistence/conversations.js';
import { LiveTextPublisher } from '../transport/live-text.publisher.js';
import { TenantDayBudget } from './tenant-day-budget.js';
import { PolicyClient, type SubmitOutcome } from '../transport/policy.client.js';
import { ModelLoopMetrics } from '../metrics.js';

/** Runs one step of one conversation's loop; answers which step it was. */
export class AdvanceConversationCommand extends Command<LoopAction['kind']> {
  constructor(
    readonly tenant: string,
    readonly conversationId: string,
    /** The event that triggered this step (the causation of what it appends). */
    readonly causationId: string,
    /** 1 on the first delivery of the trigger; counts retries of a failing step. */
    readonly attempt: number,
  ) {
    super();
  }
}

/**
 * The loop driver. Each event on a conversation triggers one step: read the conversation from the log, ask the pure
 * `nextAction` what is due, do it, append the result. The appended event triggers the next step, so the loop runs
 * until it waits on something outside (an outcome, an owner) and resumes when that arrives, also after a restart.
 * Every step is safe to repeat: policy gives each requested call its id from its origin (conversation, turn, index)
 * before the reply is recorded, so a re-submit from the same origin is a duplicate that observes the original call,
 * and the decider ignores a second reply for a turn or a second result for a call. Model-loop derives no id and reads
 * no tool name: policy identifies every call, and sets where it runs.
 */
@CommandHandler(AdvanceConversationCommand)
export class AdvanceConversationHandler implements ICommandHandler<AdvanceConversationCommand> {
  constructor(
    private readonly conversations: Conversations,
    private readonly models: ModelProviders,
    private readonly policy: PolicyClient,
    @Inject(MODEL_LOOP_CONFIG) private readonly config: ModelLoopConfig,
    @Inject(INFRA) private readonly infra: Infrastructure,
    private readonly metrics: ModelLoopMetrics,
    private readonly live: LiveTextPublisher,
    private readonly budget: TenantDayBudget,
  ) {}

  async execute(cmd: AdvanceConversationCommand): Promise<LoopAction['kind']> {
    const record = await this.conversations.read(cmd.tenant, cmd.conversationId);
    const { state, messages } = record;
    const action = nextAction(state, new Date());
    if (state.status === 'absent' || action.kind === 'idle') return action.kind;
    const conversation_id = cmd.conversationId;
    try {
      // Every reply is followed by a step: what it used is on the tenant's day before anything else happens.
      await this.budget.settleLastReply(cmd.tenant, record, this.cause(cmd));
      switch (action.kind) {
        case 'submit':
          await this.claimToolCalls(cmd, record, action.call_ids);
          await this.submit(cmd, state, messages, action.call_ids);
          break;
        case 'call_model':
          await this.budget.claimStep(cmd.tenant, record, action.turn, this.cause(cmd));
          await this.callModel(cmd, state, messages, action.turn);
          break;
        case 'pause':
          await this.apply(cmd, { type: 'PauseConversation', data: { conversation_id } });
          break;
        case 'resume':
          await this.apply(cmd, {
            type: 'ResumeConversation',
            data: { conversation_id, reason: 'Every call the conversation waited on has its final outcome.' },
          });
          break;
        case 'complete':
          await this.apply(cmd, {
            type: 'CompleteConversation',
            data: {
              conversation_id,
              reason: action.reason,
              final_text: action.final_text,
              ...(action.bound ? { bound: action.bound } : {}),
            },
          });
          break;
        default:
          return assertNever(action);
      }
    } catch (err) {
      if (isTenantDaySpentError(err)) {
        await this.stopForTheDay(cmd, err, action.kind === 'submit');
        return 'complete';
      }
      // The conversation moved on between the read and the append; the event that moved it triggers the next step.
      if (!isConversationStateError(err)) throw err;
      this.infra.logger.debug({ conversation_id, step: action.kind, err: err.message }, 'step overtaken');
    }
    return action.kind;
  }

  /** Claims each reply's outstanding requests on the tenant's day, all of a reply at once, before any is submitted. */
  private async claimToolCalls(
    cmd: AdvanceConversationCommand,
    record: ConversationRecord,
    callIds: readonly string[],
  ): Promise<void> {
    if (record.state.status === 'absent') return;
    const perTurn = new Map<number, number>();
    for (const callId of callIds) {
      const turn = record.state.calls[callId]?.turn;
      if (turn !== undefined) perTurn.set(turn, (perTurn.get(turn) ?? 0) + 1);
    }
    for (const [turn, count] of perTurn) {
      await this.budget.claimToolCalls(cmd.tenant, record, turn, count, this.cause(cmd));
    }
  }

  /** The tenant's day has no room: the conversation completes, naming the daily bound it reached. */
  private async stopForTheDay(cmd: AdvanceConversationCommand, err: TenantDaySpentError, calls: boolean) {
    const what = calls ? 'its last reply asked for more tool calls than' : 'no further model turn fits';
    await this.apply(cmd, {
      type: 'CompleteConversation',
      data: {
        conversation_id: cmd.conversationId,
        reason: err.bound.bound,
        final_text:
          `The agent stopped: ${what} tenant ${err.tenant}'s daily limit for ${err.day} (UTC) ` +
          `(${describeDayBound(err.bound)})${calls ? ', so nothing from that reply was run' : ''}.`,
        bound: err.bound,
      },
    });
  }

  /** Step 3: hand each outstanding request to policy; record what policy decided that the model must hear now. */
  private async submit(
    cmd: AdvanceConversationCommand,
    state: LiveConversation,
    messages: readonly ConversationMessageV1[],
    callIds: readonly string[],
  ): Promise<void> {
    const requested = new Map(
      messages.flatMap((m) => m.tool_calls ?? []).map((c): [string, RequestedToolCallV1] => [c.call_id, c]),
    );
    for (const callId of callIds) {
      const request = requested.get(callId);
      const tracked = state.calls[callId];
      if (!request || !tracked) throw new Error(`call ${callId} is tracked but missing from the transcript`);
      // What the model had read when it asked: untrusted content since the user's last message, the owner's denials.
      const context = contextOfTurn(messages, tracked.turn);
      const taint = conversationTaint(context);
      const denials = ownerDenials(context);
      // Everything the session has: policy decides from the tool's executor whether the call runs on the device.
      const outcome = await this.submitTraced(cmd, state, request, {
        tenant: cmd.tenant,
        agent_id: state.facts.agent_id,
        tool: request.name,
        arguments: request.arguments,
        origin: {
          kind: 'conversation',
          conversation_id: cmd.conversationId,
          turn: tracked.turn,
          index: tracked.index,
        },
        device_id: state.facts.device_id,
        correlation_id: cmd.conversationId,
        ...(taint ? { taint } : {}),
        ...(denials.length > 0 ? { denials } : {}),
      });
      const report = reportOfSubmit(outcome);
      if (!report) continue;
      // The call as policy recorded it: the id its submit answered (the one identify gave), else the one on record.
      const recorded = outcome.kind === 'decided' ? outcome.reply.call_id : callId;
      const result = toolResult(
        { call_id: recorded, tool: request.name, source: 'ormuz', outcome: report },
        this.config.toolResultMaxBytes,
      );
      await this.apply(cmd, {
        type: 'AddToolResult',
        data: { conversation_id: cmd.conversationId, call_id: recorded, ...result },
      });
    }
  }

  /**
   * One tool request handed to policy, as the GenAI conventions name it: the `execute_tool <tool>` span that starts
   * the call's trace. Every hop of the call (gate, approval, dispatch, the device, its outcome, the result the model
   * reads) continues it; the conversation step that asked is linked, not the parent, so one call is one trace.
   */
  private submitTraced(
    cmd: AdvanceConversationCommand,
    state: LiveConversation,
    request: RequestedToolCallV1,
    submit: Parameters<PolicyClient['submit']>[0],
  ): Promise<SubmitOutcome> {
    const attributes = {
      ...toolCallAttributes({ tenant: cmd.tenant, tool: request.name, callId: request.call_id }),
      [GEN_AI_OPERATION_NAME]: EXECUTE_TOOL,
      [GEN_AI_TOOL_TYPE]: 'function',
      [GEN_AI_CONVERSATION_ID]: cmd.conversationId,
      [GEN_AI_AGENT_ID]: state.facts.agent_id,
      ...(state.facts.device_id ? { [ORMUZ_DEVICE_ID]: state.facts.device_id } : {}),
    };
    return inSpan(
      '@ormuz/model-loop',
      `${EXECUTE_TOOL} ${request.name}`,
      { root: true, links: linksTo(), attributes },
      async (span) => {
        const outcome = await this.policy.submit(submit, request.call_id);
        span.setAttribute(ORMUZ_CALL_STATUS, outcome.kind === 'decided' ? outcome.reply.status : 'rejected');
        return outcome;
      },
    );
  }

  /**
   * Steps 1–2: send the conversation, with the agent's tools fitted to the model's tier, to the model and record its
   * reply with each request as policy identified it (`policy.identify`: its call id, and its tool name as the call
   * will be recorded, an encoded name decoded). Recording before submitting is what lets a restart re-submit the
   * same calls rather than ask the model again.
   */
  private async callModel(
    cmd: AdvanceConversationCommand,
    state: LiveConversation,
    messages: readonly ConversationMessageV1[],
    turn: number,
  ): Promise<void> {
    const conversation_id = cmd.conversationId;
    const provider = this.models.for(state.facts.model, state.facts.model_settings);
    // Asked before the model: if policy cannot answer, the step is retried rather than the conversation failed.
    const offered = await this.policy.tools(cmd.tenant, state.facts.agent_id);
    let reply: ModelReply;
    try {
      if (!provider) throw new Error(`no provider serves ${state.facts.model} any more`);
      const asked = performance.now();
      // A streaming provider's text goes live as it arrives; what is recorded below is the reply as completed.
      const onText = this.live.forTurn({
        tenant: cmd.tenant,
        conversationId: conversation_id,
        turn,
        attempt: cmd.attempt,
      });
      reply = await provider.complete({ ...this.request(provider, state, messages, turn, offered), onText });
      this.metrics.answered(state.facts.model, reply.usage, (performance.now() - asked) / 1000);
      // Nothing to record and nothing to run: asked again like a model that did not answer.
      if (replyText(reply).trim() === '' && reply.tool_calls.length === 0) {
        throw new ModelUnavailableError(state.facts.model, 'the model sent an empty reply');
      }
    } catch (err) {
      this.metrics.failed(state.facts.model);
      if (cmd.attempt < this.config.modelAttempts) throw err;
      const why = err instanceof Error ? err.message : String(err);
      await this.apply(cmd, {
        type: 'CompleteConversation',
        data: {
          conversation_id,
          reason: 'failed',
          final_text: `The agent stopped: the model did not answer after ${cmd.attempt} attempts (${why}).`,
        },
      });
      return;
    }
    if (reply.tool_calls.length > MAX_TOOL_CALLS_PER_REPLY) {
      await this.apply(cmd, {
        type: 'CompleteConversation',
        data: {
          conversation_id,
          reason: 'tool_limit',
          final_text: `The agent stopped: the model asked for ${reply.tool_calls.length} tools in one reply, more than the ${MAX_TOOL_CALLS_PER_REPLY} allowed; none of them was run.`,
        },
      });
      return;
    }
    const identified = await this.policy.identify({
      tenant: cmd.tenant,
      calls: reply.tool_calls.map((c, index) => ({
        tool: c.name,
        origin: { kind: 'conversation', conversation_id, turn, index },
      })),
    });
    if (identified.length !== reply.tool_calls.length) {
      throw new Error(`policy identified ${identified.length} calls of the ${reply.tool_calls.length} requested`);
    }
    const tool_calls = reply.tool_calls.map((c, index) => ({
      index,
      name: identified[index]!.tool,
      arguments: c.arguments,
      call_id: identified[index]!.call_id,
    }));
    // Requests the adapter found unusable are answered here, with the reply, and never reach policy.
    const rejected = reply.tool_calls.flatMap((c, index) => {
      if (c.invalid === undefined) return [];
      const { call_id, name } = tool_calls[index]!;
      const outcome = { status: 'rejected', message: c.invalid } as const;
      return [
        { call_id, ...toolResult({ call_id, tool: name, source: 'ormuz', outcome }, this.config.toolResultMaxBytes) },
      ];
    });
    await this.apply(cmd, {
      type: 'AddModelReply',
      data: {
        conversation_id,
        turn,
        content: replyText(reply).slice(0, MAX_MESSAGE_CHARS),
        tool_calls,
        usage: reply.usage,
        ...(reply.stop_reason ? { stop_reason: reply.stop_reason } : {}),
        ...(rejected.length > 0 ? { rejected } : {}),
      },
    });
  }

  /** One turn's request: the standing instructions, the transcript, and the tools selected for the model's tier. */
  private request(
    provider: ModelProvider,
    state: LiveConversation,
    messages: readonly ConversationMessageV1[],
    turn: number,
    offered: readonly OfferedToolV1[],
  ): ModelRequest {
    const profile = provider.profile(state.facts.model);
    const { system, tools, directory } = turnPayload({
      offered,
      profile,
      tokens: profile.tokenFamily ? tokenCounter(profile.tokenFamily) : tokenCounterFor(state.facts.model),
      pinned: [...state.facts.pinned_tools, ...configuredPins(this.config, state.facts.agent_id)],
      activated: Object.keys(state.activated),
      text: turnText(messages),
    });
    const conversation_id = state.facts.conversation_id;
    return {
      model: state.facts.model,
      settings: state.facts.model_settings,
      conversation_id,
      turn,
      system,
      messages,
      tools,
      directory,
    };
  }

  private apply(cmd: AdvanceConversationCommand, command: ConversationCommand) {
    return this.conversations.execute(cmd.tenant, cmd.conversationId, command, this.cause(cmd));
  }

  private cause(cmd: AdvanceConversationCommand) {
    return { correlationid: cmd.conversationId, causationid: cmd.causationId };
  }
}

/**
 * The reply's text, or, when the provider withheld or cut all of it and nothing was requested, a runtime sentence
 * saying so (a reply without requests must have text, and the user should learn why there is no answer).
 */
function replyText(reply: ModelReply): string {
  if (reply.content.trim() !== '' || reply.tool_calls.length > 0) return reply.content;
  switch (reply.stop_reason) {
    case 'content_filter':
      return "(The model's reply was withheld by its provider's content filter.)";
    case 'refusal':
      return '(The model declined to answer.)';
    case 'length':
      return "(The model's reply was cut off by its output limit before it wrote any text.)";
    default:
      return reply.content;
  }
}

/** What the model hears right after the submit: refusals and pending confirmations. Other outcomes arrive as events. */
function reportOfSubmit(outcome: SubmitOutcome): CallOutcomeReport | null {
  if (outcome.kind === 'rejected') return { status: 'rejected', message: outcome.message };
  const r = outcome.reply;
  if (r.status === 'refused') return { status: 'refused', message: r.message ?? 'Policy refused this call.' };
  if (r.status === 'staged' && r.approval_id && r.summary) {
    return { status: 'pending_confirmation', approval_id: r.approval_id, summary: r.summary };
  }
  return null;
}

function assertNever(value: never): never {
  throw new Error(`unhandled loop action ${JSON.stringify(value)}`);
}
