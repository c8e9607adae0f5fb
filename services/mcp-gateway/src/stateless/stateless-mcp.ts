import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Inject, Injectable, type OnApplicationShutdown } from '@nestjs/common';
import {
  createMcpHandler,
  isLegacyRequest,
  ProtocolError,
  ProtocolErrorCode,
  Server,
  type AuthInfo,
  type McpHttpHandler,
  type McpRequestContext,
} from '@modelcontextprotocol/server';
import { toNodeHandler, type NodeMcpRequestHandler } from '@modelcontextprotocol/node';
import { INFRA, type Infrastructure } from '@ormuz/service-kit';
import { MCP_GATEWAY_CONFIG, type McpGatewayConfig } from '../config.js';
import { clientOperationId, sessionOperationId } from '../domain/operation-id.js';
import { InvalidCursorError } from '../domain/tool-listing.js';
import type { SessionPrincipal } from '../sessions/call-runner.js';
import { GatewayTools, INSTRUCTIONS, progressTo } from '../sessions/gateway-tools.js';

/** One agent's endpoint: the SDK's handler (and its `subscriptions/listen` streams), served from node's http. */
interface AgentEndpoint {
  readonly handler: McpHttpHandler;
  readonly serve: NodeMcpRequestHandler;
}

/** The key under which the device a request acts on rides to the SDK's server factory (`AuthInfo.extra`). */
const DEVICE_EXTRA = 'ormuz/device_id';

/**
 * The stateless 2026-07-28 revision of MCP, on the v2 SDK (`@modelcontextprotocol/server`): no `initialize`, no
 * session; each request carries the protocol version and client in its `_meta` envelope and is answered by a fresh
 * SDK `Server` (`server/discover`, `tools/list`, `tools/call`), which the SDK's `createMcpHandler` builds per request.
 * The caller was checked before (McpController: host, origin, API key, device); the principal reaches the server
 * through the handler: one handler per agent, so that `notifications/tools/list_changed` on a client's
 * `subscriptions/listen` stream is sent to that agent's clients only, and the device in the request's `AuthInfo`.
 *
 * Tasks are not served here (2026-07-28 took them out of the core protocol): a call that waits for the owner is
 * answered at once as pending, as over a 2025 session without a task. A call without a client operation id gets a
 * fresh derived one (there is no session to make a retried request id the same call); a re-send of it within the
 * window is still the original call (CallRunner, ResentCalls).
 */
@Injectable()
export class StatelessMcp implements OnApplicationShutdown {
  private readonly endpoints = new Map<string, AgentEndpoint>();

  constructor(
    @Inject(INFRA) private readonly infra: Infrastructure,
    @Inject(MCP_GATEWAY_CONFIG) private readonly config: McpGatewayConfig,
    private readonly tools: GatewayTools,
  ) {}

  /**
   * True when a POST is of the 2026-07-28 revision (it carries the per-request envelope, or names the revision in
   * `MCP-Protocol-Version`), as the SDK classifies it; 2025 traffic (`initialize`, a session's requests) is not.
   */
  async claims(req: IncomingMessage, body: unknown): Promise<boolean> {
    const headers = new Headers();
    for (const [name, value] of Object.entries(req.headers)) {
      if (value !== undefined) headers.set(name, Array.isArray(value) ? value.join(', ') : value);
    }
    const request = new Request(`http://gateway${req.url ?? '/mcp'}`, { method: req.method ?? 'POST', headers });
    return !(await isLegacyRequest(request, body, { maxRequestBodySize: this.config.maxBodyBytes }));
  }

  /** Answers one 2026-07-28 request of `principal` (the key `keyId`'s), `body` its parsed JSON. */
  serve(
    req: IncomingMessage,
    res: ServerResponse,
    body: unknown,
    principal: SessionPrincipal,
    keyId: string,
  ): Promise<void> {
    const auth: AuthInfo = {
      token: keyId,
      clientId: principal.agentId,
      scopes: [],
      extra: { [DEVICE_EXTRA]: principal.deviceId },
    };
    return this.endpointOf(principal.tenant, principal.agentId).serve(Object.assign(req, { auth }), res, body);
  }

  /** Tells `tenant`'s `agentId`'s open `subscriptions/listen` streams that its tools changed. */
  grantChanged(tenant: string, agentId: string): void {
    this.endpoints.get(endpointKey(tenant, agentId))?.handler.notify.toolsChanged();
  }

  async onApplicationShutdown(): Promise<void> {
    await Promise.all([...this.endpoints.values()].map((e) => e.handler.close().catch(() => undefined)));
    this.endpoints.clear();
  }

  private endpointOf(tenant: string, agentId: string): AgentEndpoint {
    const key = endpointKey(tenant, agentId);
    let endpoint = this.endpoints.get(key);
    if (!endpoint) {
      const onerror = (err: Error) => this.infra.logger.debug({ err: err.message }, 'a 2026-07-28 request failed');
      const handler = createMcpHandler((ctx) => this.serverFor(tenant, agentId, ctx), {
        legacy: 'reject',
        maxRequestBodySize: this.config.maxBodyBytes,
        onerror,
      });
      endpoint = { handler, serve: toNodeHandler(handler, { onerror, maxRequestBodySize: this.config.maxBodyBytes }) };
      this.endpoints.set(key, endpoint);
    }
    return endpoint;
  }

  /** The SDK server that answers one request: the agent's grant as its tools, calls through policy. */
  private serverFor(tenant: string, agentId: string, ctx: McpRequestContext): Server {
    const device = ctx.authInfo?.extra?.[DEVICE_EXTRA];
    const principal: SessionPrincipal = { tenant, agentId, deviceId: typeof device === 'string' ? device : null };
    const server = new Server(
      { name: 'ormuz', title: 'Ormuz', version: '0.1.0' },
      { capabilities: { tools: { listChanged: true } }, instructions: INSTRUCTIONS },
    );
    server.setRequestHandler('tools/list', async (request) => {
      const offered = await this.tools.offered(principal);
      try {
        const page = this.tools.page(offered, request.params?.cursor);
        // Without tasks on this revision, no tool is offered as one.
        const tools = page.tools.map(({ execution: _, ...tool }) => tool);
        return { tools, ...(page.nextCursor ? { nextCursor: page.nextCursor } : {}) };
      } catch (err) {
        if (err instanceof InvalidCursorError) throw new ProtocolError(ProtocolErrorCode.InvalidParams, err.message);
        throw err;
      }
    });
    server.setRequestHandler('tools/call', async (request, call) => {
      const meta = call.mcpReq._meta as Record<string, unknown> | undefined;
      let operationId: string;
      try {
        operationId = clientOperationId(meta) ?? sessionOperationId(`stateless-${randomUUID()}`, call.mcpReq.id);
      } catch (err) {
        throw new ProtocolError(ProtocolErrorCode.InvalidParams, (err as Error).message);
      }
      const result = await this.tools.call(principal, {
        tool: request.params.name,
        offered: this.tools.offered(principal),
        arguments: request.params.arguments ?? {},
        operationId,
        signal: call.mcpReq.signal,
        ...progressTo(request.params.name, meta?.progressToken, (notice) => call.mcpReq.notify(notice)),
      });
      return { ...result, content: [...result.content] };
    });
    return server;
  }
}

function endpointKey(tenant: string, agentId: string): string {
  return JSON.stringify([tenant, agentId]);
}
