import { Inject } from '@nestjs/common';
import { Command, CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import { isToolCallEvent, type OrmuzEvent } from '@ormuz/contracts';
import { ToolCalls } from '@ormuz/service-kit';
import { GEN_AI_CONVERSATION_ID, inSpan, ORMUZ_CALL_STATUS, toolCallAttributes } from '@ormuz/tracing';
import { MODEL_LOOP_CONFIG, type ModelLoopConfig } from '../config.js';
import { isConversationNotFoundError, isUnknownToolCallError } from '../domain/errors.js';
import { coreToolNote } from '../domain/core-tools.js';
import { reportOf, toolResult } from '@ormuz/tool-call';
import { Conversations } from '../persistence/conversations.js';

/** Returns true when the event became a tool result in one of this service's conversations. */
export class RecordCallOutcomeCommand extends Command<boolean> {
  constructor(readonly event: OrmuzEvent) {
    super();
  }
}

/**
 * Step 5 of the loop: a tool-call event that settles (or stages) a call of one of our conversations becomes a tool
 * message in it. The call's origin comes from the call's own record, not from the event's correlation id, so
 * outcomes appended by any service are routed. Idempotent: a second result for a call adds nothing.
 */
@CommandHandler(RecordCallOutcomeCommand)
export class RecordCallOutcomeHandler implements ICommandHandler<RecordCallOutcomeCommand> {
  constructor(
    private readonly calls: ToolCalls,
    private readonly conversations: Conversations,
    @Inject(MODEL_LOOP_CONFIG) private readonly config: ModelLoopConfig,
  ) {}

  async execute({ event }: RecordCallOutcomeCommand): Promise<boolean> {
    const report = isToolCallEvent(event) ? reportOf(event) : null;
    if (!report) return false;
    const { state: call } = await this.calls.load(event.tenant, event.subject);
    if (call.status === 'absent' || call.call.origin.kind !== 'conversation') return false;
    const executor = 'dispatch' in call && call.dispatch ? call.dispatch.executor : null;
    const fromExecutor =
      report.status === 'succeeded' || report.status === 'failed' || report.status === 'outcome_unknown';
    // The platform's own tools are the runtime speaking; a device's output is that device's.
    const source = fromExecutor && executor?.kind === 'device' ? `device:${executor.device_id}` : 'ormuz';
    const note =
      report.status === 'succeeded' && executor?.kind === 'platform'
        ? coreToolNote(call.call.tool, report.result)
        : undefined;
    const result = toolResult(
      { call_id: call.call.call_id, tool: call.call.tool, source, outcome: report, ...(note ? { note } : {}) },
      this.config.toolResultMaxBytes,
    );
    const conversationId = call.call.origin.conversation_id;
    // The way back: the result the model will read, in the trace of the call (the outcome's message carried it).
    const attributes = {
      ...toolCallAttributes({ tenant: event.tenant, tool: call.call.tool, callId: call.call.call_id }),
      [GEN_AI_CONVERSATION_ID]: conversationId,
      [ORMUZ_CALL_STATUS]: report.status,
    };
    return inSpan('@ormuz/model-loop', `tool_result ${call.call.tool}`, { attributes }, async () => {
      try {
        const { events } = await this.conversations.execute(
          event.tenant,
          conversationId,
          { type: 'AddToolResult', data: { conversation_id: conversationId, call_id: call.call.call_id, ...result } },
          { correlationid: conversationId, causationid: event.id },
        );
        return events.length > 0;
      } catch (err) {
        // A call made in another deployment's conversation, or by an API caller reusing a conversation origin.
        if (isConversationNotFoundError(err) || isUnknownToolCallError(err)) return false;
        throw err;
      }
    });
  }
}
