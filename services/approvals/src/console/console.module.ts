import { Module, RequestMethod, type MiddlewareConsumer, type NestModule } from '@nestjs/common';
import { INFRA, type Infrastructure } from '@ormuz/service-kit';
import { InboxRepository } from '../persistence/inbox.repository.js';
import { ApprovalStreamController } from './approval-stream.controller.js';
import { ConsoleOidc } from './console-oidc.js';
import { ConsoleOidcController } from './console-oidc.controller.js';
import { ConsolePageController } from './console-page.controller.js';
import { InboxNotices } from './inbox-notices.js';
import { LiveStreams } from './live-streams.js';
import { SameOriginMiddleware } from './same-origin.middleware.js';
import { SessionController } from './session.controller.js';

/**
 * The owners' approvals console: the page at `/console`, the live inbox stream, the call detail it draws, and the
 * same-origin check every state-changing route of the service goes through.
 */
@Module({
  controllers: [ConsoleOidcController, ConsolePageController, SessionController, ApprovalStreamController],
  providers: [
    InboxRepository,
    LiveStreams,
    ConsoleOidc,
    {
      provide: InboxNotices,
      inject: [INFRA],
      useFactory: (infra: Infrastructure) => new InboxNotices(infra.nc, infra.config.namespace),
    },
  ],
})
export class ConsoleModule implements NestModule {
  configure(consumer: MiddlewareConsumer): void {
    consumer.apply(SameOriginMiddleware).forRoutes({ path: '{*path}', method: RequestMethod.ALL });
  }
}
