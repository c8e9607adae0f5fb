import { Controller, Get, Headers, Inject, Param, Res, UseGuards } from '@nestjs/common';
import type { ServerResponse } from 'node:http';
import type { Identity } from '@ormuz/auth';
import { BearerAuthGuard, Caller, checkRequest, INFRA, type Infrastructure } from '@ormuz/service-kit';
import { InboxRepository } from '../persistence/inbox.repository.js';
import { ownerAgents } from '../transport/approvals.rpc.controller.js';
import { ApprovalStream } from './approval-stream.js';
import { APPROVALS_CONFIG, type ApprovalsConfig } from '../config.js';
import { bearerOf } from './bearer.js';
import { CredentialWatch } from './credential-watch.js';
import { InboxNotices } from './inbox-notices.js';
import { LiveStreams } from './live-streams.js';

/** A comment every so often keeps proxies and load balancers from closing an idle stream. */
const HEARTBEAT_MS = 15_000;
/** How many closed approvals a snapshot carries (the console's history). */
const HISTORY_LIMIT = 200;

/**
 * `GET /v1/tenants/:tenant/approvals/stream`: the inbox as server-sent events (see ApprovalStream), for whoever may
 * list the tenant's approvals. The caller presents `Authorization: Bearer <token>` like on every other route: the
 * console reads the stream with fetch, which can send that header, instead of EventSource, which cannot. So no token
 * ever travels in a URL, where it would land in access logs, proxies and the browser's history.
 */
@Controller('v1/tenants/:tenant/approvals/stream')
@UseGuards(BearerAuthGuard)
export class ApprovalStreamController {
  constructor(
    private readonly inbox: InboxRepository,
    private readonly notices: InboxNotices,
    private readonly streams: LiveStreams,
    @Inject(INFRA) private readonly infra: Infrastructure,
    @Inject(APPROVALS_CONFIG) private readonly config: ApprovalsConfig,
  ) {}

  @Get()
  stream(
    @Caller() caller: Identity | undefined,
    @Param('tenant') tenant: string,
    @Headers('authorization') authorization: string | undefined,
    @Res() res: ServerResponse,
  ): void {
    // Refusals are thrown before the first byte, so they are ordinary JSON errors with their status (401, 403).
    const request = checkRequest('approvals.list', caller, { tenant });
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-store',
      // Tells nginx-style proxies not to buffer the stream.
      'x-accel-buffering': 'no',
    });
    res.flushHeaders();
    const stream = new ApprovalStream(
      res,
      this.inbox,
      this.notices,
      {
        tenant: request.tenant,
        agents: ownerAgents(caller!),
        heartbeatMs: HEARTBEAT_MS,
        historyLimit: HISTORY_LIMIT,
      },
      this.infra.logger,
    );
    const watch = new CredentialWatch(this.infra.authenticator, bearerOf(authorization), {
      recheckMs: this.config.streamRecheckMs,
      onRecheckError: (err) =>
        this.infra.logger.warn({ err: err.message }, 'a live stream could not verify its credential again'),
    });
    this.streams.add(stream);
    stream.onClose(() => watch.stop());
    res.on('close', () => stream.close());
    stream.open();
    watch.start((why) => stream.end(why));
  }
}
