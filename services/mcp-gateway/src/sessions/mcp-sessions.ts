import { randomUUID } from 'node:crypto';
import { Inject, Injectable, type OnApplicationShutdown } from '@nestjs/common';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError } from '@modelcontextprotocol/sdk/types.js';
import type { OfferedToolV1 } from '@ormuz/contracts';
import { INFRA, type Infrastructure } from '@ormuz/service-kit';
import { MCP_GATEWAY_CONFIG, type McpGatewayConfig } from '../config.js';
import { InvalidCursorError } from '../domain/tool-listing.js';
import { clientOperationId, sessionOperationId } from '../domain/operation-id.js';
import { CallRunner, type SessionPrincipal } from './call-runner.js';
import { CancellableTaskStore } from './cancellable-task-store.js';
import { failedCall, GatewayTools, INSTRUCTIONS, progressTo } from './gateway-tools.js';

/** One MCP session: its SDK server and transport, bound to the API key that opened it. */
export interface McpSession {
  readonly transport: StreamableHTTPServerTransport;
  readonly server: Server;
  /** The key that opened the session; a request with any other key does not find it. */
  readonly keyId: string;
  readonly principal: SessionPrincipal;
  lastSeen: number;
  /** The tools policy last offered the session's agent; unset until asked, and again when the grant changes. */
  offered: Promise<readonly OfferedToolV1[]> | undefined;
}

/**
 * The open sessions of this gateway, each an SDK `Server` on its own Streamable HTTP transport (`Mcp-Session-Id`).
 * A session acts for the tenant and agent of the key that opened it, on the device it named; the key id is kept so
 * that a session id presented with another key is not found. Sessions live in this process only: a restarted
 * gateway's clients open new ones (a call's outcome is on the log, under the same operation id).
 */
/** How often a client is asked to read a task while it works, in ms. */
const TASK_POLL_HINT_MS = 1000;

@Injectable()
export class McpSessions implements OnApplicationShutdown {
  private readonly sessions = new Map<string, McpSession>();
  /**
   * The tasks of every session (2025-11-25 tasks): ids of 128 random bits, each found only from the session that
   * created it, so only by the key and tenant that opened that session. The call a task runs is on the log whatever
   * becomes of the task.
   */
  private readonly tasks = new CancellableTaskStore();
  private readonly sweeper: NodeJS.Timeout;

  constructor(
    @Inject(INFRA) private readonly infra: Infrastructure,
    @Inject(MCP_GATEWAY_CONFIG) private readonly config: McpGatewayConfig,
    private readonly tools: GatewayTools,
    private readonly calls: CallRunner,
  ) {
    this.sweeper = setInterval(() => this.closeIdle(), Math.min(config.sessionIdleMs, 60_000));
    this.sweeper.unref();
  }

  /** The session `id` when `keyId` opened it; `undefined` otherwise (unknown, closed, or another key's). */
  find(id: string, keyId: string): McpSession | undefined {
    const session = this.sessions.get(id);
    if (!session || session.keyId !== keyId) return undefined;
    session.lastSeen = Date.now();
    return session;
  }

  /** True when another session may open. */
  hasRoom(): boolean {
    return this.sessions.size < this.config.maxSessions;
  }

  /** A new session for `principal`, registered once the client's `initialize` gives it its id. */
  open(principal: SessionPrincipal, keyId: string): McpSession {
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => {
        this.sessions.set(id, session);
      },
      onsessionclosed: (id) => {
        this.sessions.delete(id);
      },
    });
    const server = new Server(
      { name: 'ormuz', title: 'Ormuz', version: '0.1.0' },
      {
        capabilities: {
          tools: { listChanged: true },
          tasks: { list: {}, requests: { tools: { call: {} } } },
        },
        instructions: INSTRUCTIONS,
        taskStore: this.tasks,
      },
    );
    const session: McpSession = { transport, server, keyId, principal, lastSeen: Date.now(), offered: undefined };
    transport.onclose = () => {
      if (transport.sessionId) this.sessions.delete(transport.sessionId);
    };
    this.serve(session);
    // connect only wires the transport's callbacks; it resolves at once.
    void server.connect(transport);
    return session;
  }

  /**
   * Tells every open session of `tenant`'s `agentId` that its tools changed (`notifications/tools/list_changed`), and
   * forgets what they were offered, so that the next list or call asks policy again.
   */
  grantChanged(tenant: string, agentId: string): void {
    for (const session of this.sessions.values()) {
      if (session.principal.tenant !== tenant || session.principal.agentId !== agentId) continue;
      session.offered = undefined;
      session.server.sendToolListChanged().catch((err: unknown) => {
        this.infra.logger.debug({ err: (err as Error).message }, 'tools/list_changed not sent');
      });
    }
  }

  async onApplicationShutdown(): Promise<void> {
    clearInterval(this.sweeper);
    await Promise.all([...this.sessions.values()].map((s) => s.transport.close().catch(() => undefined)));
    this.sessions.clear();
  }

  private closeIdle(): void {
    const cutoff = Date.now() - this.config.sessionIdleMs;
    for (const [id, session] of this.sessions) {
      if (session.lastSeen < cutoff) {
        this.sessions.delete(id);
        void session.transport.close().catch(() => undefined);
      }
    }
  }

  /** What policy offers the session's agent now; remembered for the session's calls until the grant changes. */
  private offeredTo(session: McpSession): Promise<readonly OfferedToolV1[]> {
    const asked = this.tools.offered(session.principal);
    session.offered = asked;
    asked.catch(() => {
      if (session.offered === asked) session.offered = undefined;
    });
    return asked;
  }

  /** The session's handlers: `tools/list` is the agent's grant, `tools/call` goes through policy. */
  private serve(session: McpSession): void {
    const { server, principal } = session;
    const { tenant, agentId } = principal;
    server.setRequestHandler(ListToolsRequestSchema, async (request) => {
      const offered = await this.offeredTo(session);
      try {
        const page = this.tools.page(offered, request.params?.cursor);
        return { tools: [...page.tools], ...(page.nextCursor ? { nextCursor: page.nextCursor } : {}) };
      } catch (err) {
        if (err instanceof InvalidCursorError) throw new McpError(ErrorCode.InvalidParams, err.message);
        throw err;
      }
    });
    server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
      const meta = request.params._meta as Record<string, unknown> | undefined;
      let operationId: string;
      try {
        operationId = clientOperationId(meta) ?? sessionOperationId(extra.sessionId ?? 'none', extra.requestId);
      } catch (err) {
        throw new McpError(ErrorCode.InvalidParams, (err as Error).message);
      }
      if (request.params.task && extra.taskStore) {
        // A task: answered at once with its id; the call is run to its real outcome (through the owner's decision
        // for a staged one) in the background, and the task ends completed or failed with it.
        const ttl = Math.min(request.params.task.ttl ?? this.config.taskWaitMs, this.config.taskWaitMs);
        const store = extra.taskStore;
        // The client's hint for `tasks/get`: the task's result is stored as soon as the call settles.
        const task = await store.createTask({ ttl, pollInterval: TASK_POLL_HINT_MS });
        // `tasks/cancel` aborts it: a call that has not started is sealed, and the cancelled task keeps no result.
        const signal = this.tasks.signalOf(task.taskId);
        void this.calls
          .run(principal, {
            tool: request.params.name,
            offered: session.offered ?? this.offeredTo(session),
            arguments: request.params.arguments ?? {},
            operationId,
            taskWaitMs: ttl,
            signal,
          })
          .then((result) =>
            signal.aborted
              ? undefined
              : store.storeTaskResult(task.taskId, result.isError ? 'failed' : 'completed', result),
          )
          .catch((err: unknown) => {
            this.infra.logger.warn({ err: (err as Error).message, tenant, agent_id: agentId }, 'task call failed');
            return store.storeTaskResult(task.taskId, 'failed', failedCall(err));
          })
          .catch(() => undefined);
        return { task };
      }
      return this.tools.call(principal, {
        tool: request.params.name,
        offered: session.offered ?? this.offeredTo(session),
        arguments: request.params.arguments ?? {},
        operationId,
        signal: extra.signal,
        ...progressTo(request.params.name, meta?.progressToken, (notice) => extra.sendNotification(notice)),
      });
    });
  }
}
