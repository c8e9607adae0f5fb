import { Inject, Injectable, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { assertValid, grantNoticesFilter, POLICY_GRANT_NOTICE_V1, type GrantChangedNoticeV1 } from '@ormuz/contracts';
import { INFRA, type Infrastructure } from '@ormuz/service-kit';
import { McpSessions } from '../sessions/mcp-sessions.js';
import { StatelessMcp } from '../stateless/stateless-mcp.js';

/**
 * Hears policy's grant notices (`<ns>.notice.grants.<tenant>`, core NATS) and tells the sessions of that agent that
 * their tools changed (2025 sessions on their stream, 2026-07-28 clients on their `subscriptions/listen` stream). A notice missed (this gateway was down, or the connection dropped) changes nothing policy
 * decides: every call is checked against the grant of the moment, and a client that lists again is told it.
 */
@Injectable()
export class GrantNoticesListener implements OnApplicationBootstrap, OnApplicationShutdown {
  private subscription: { unsubscribe(): void } | undefined;

  constructor(
    @Inject(INFRA) private readonly infra: Infrastructure,
    private readonly sessions: McpSessions,
    private readonly stateless: StatelessMcp,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    this.subscription = this.infra.nc.subscribe(grantNoticesFilter(this.infra.config.namespace), {
      callback: (err, msg) => {
        if (err) return;
        const tenant = msg.subject.split('.').at(-1)!;
        let notice: GrantChangedNoticeV1;
        try {
          notice = assertValid<GrantChangedNoticeV1>(POLICY_GRANT_NOTICE_V1, msg.json());
        } catch {
          return;
        }
        this.sessions.grantChanged(tenant, notice.agent_id);
        this.stateless.grantChanged(tenant, notice.agent_id);
      },
    });
    // Heard from now on: a grant stored after the gateway answers its health is told to its sessions.
    await this.infra.nc.flush();
  }

  onApplicationShutdown(): void {
    this.subscription?.unsubscribe();
  }
}
