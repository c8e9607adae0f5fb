import { Inject } from '@nestjs/common';
import { Command, CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import { randomUUID } from 'node:crypto';
import type { StartConversationReplyV1, StartConversationRequestV1 } from '@ormuz/contracts';
import { MODEL_LOOP_CONFIG, type ModelLoopConfig } from '../config.js';
import { UnknownModelError } from '../domain/errors.js';
import { ModelProviders } from '../domain/model-provider.js';
import { Conversations } from '../persistence/conversations.js';
import { priceOf } from '../providers/common/prices.js';

export class StartConversationCommand extends Command<StartConversationReplyV1> {
  constructor(readonly request: StartConversationRequestV1) {
    super();
  }
}

/**
 * Records the start and the task. The loop itself runs in the background, driven by the conversation's events; a
 * repeated start with the same id and facts answers the current status and changes nothing.
 */
@CommandHandler(StartConversationCommand)
export class StartConversationHandler implements ICommandHandler<StartConversationCommand> {
  constructor(
    private readonly conversations: Conversations,
    private readonly models: ModelProviders,
    @Inject(MODEL_LOOP_CONFIG) private readonly config: ModelLoopConfig,
  ) {}

  /** A cost bound with no price for the model is refused by the decider (`model_unpriced`), before anything is recorded. */
  async execute({ request: r }: StartConversationCommand): Promise<StartConversationReplyV1> {
    if (!this.models.for(r.model)) throw new UnknownModelError(r.model, this.models.examples());
    const id = r.conversation_id ?? `conv_${randomUUID().replaceAll('-', '')}`;
    const { state } = await this.conversations.execute(
      r.tenant,
      id,
      {
        type: 'StartConversation',
        data: {
          conversation_id: id,
          agent_id: r.agent_id,
          model: r.model,
          task: r.task,
          device_id: r.device_id,
          pinned_tools: r.pinned_tools ?? [],
          limits: this.config.limits,
          price: priceOf(this.config.prices, r.model),
        },
      },
      { correlationid: id, causationid: randomUUID() },
    );
    if (state.status === 'absent') throw new Error(`conversation ${id} is absent right after its start was recorded`);
    return { conversation_id: id, status: state.status };
  }
}
