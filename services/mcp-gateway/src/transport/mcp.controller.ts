import type { IncomingMessage, ServerResponse } from 'node:http';
import { Controller, Delete, Get, Inject, Post, Req, Res } from '@nestjs/common';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import { UnauthenticatedError, type AgentIdentity } from '@ormuz/auth';
import { INFRA, type Infrastructure } from '@ormuz/service-kit';
import { MCP_GATEWAY_CONFIG, type McpGatewayConfig } from '../config.js';
import { DEVICE_HEADER, deviceOf, originProblem } from '../domain/request-guard.js';
import { McpSessions, type McpSession } from '../sessions/mcp-sessions.js';
import { StatelessMcp } from '../stateless/stateless-mcp.js';
import { BodyTooLargeError, readBody } from './read-body.js';

const SESSION_HEADER = 'mcp-session-id';

/** JSON-RPC error codes the gateway answers itself (the SDK's server answers the rest). */
const PARSE_ERROR = -32700;
const INVALID_REQUEST = -32600;
/** Implementation-defined server errors: refused before any session or method. */
const REFUSED = -32001;

/**
 * The MCP endpoint, Streamable HTTP: `POST /mcp` (JSON-RPC messages), `GET /mcp` (the server's stream of a session),
 * `DELETE /mcp` (end a session). A POST of the stateless 2026-07-28 revision (its `_meta` envelope says so) is
 * answered by StatelessMcp (v2 SDK); the rest, 2025 sessions, by McpSessions (v1 SDK). Before either sees a request,
 * the gateway checks it in order: host and
 * origin (DNS rebinding), the agent's API key (401 without one or with a revoked one: on every request, so a key
 * revoked mid-session stops the session), the device it names (403 for another tenant's), the session it names
 * (404 unless this key opened it), and for a POST the body (size, JSON).
 */
@Controller('mcp')
export class McpController {
  constructor(
    @Inject(INFRA) private readonly infra: Infrastructure,
    @Inject(MCP_GATEWAY_CONFIG) private readonly config: McpGatewayConfig,
    private readonly sessions: McpSessions,
    private readonly stateless: StatelessMcp,
  ) {}

  @Post()
  async post(@Req() req: IncomingMessage, @Res() res: ServerResponse): Promise<void> {
    const caller = await this.admit(req, res);
    if (!caller) return;
    let body: unknown;
    try {
      const text = await readBody(req, this.config.maxBodyBytes);
      body = JSON.parse(text);
    } catch (err) {
      if (err instanceof BodyTooLargeError) return fail(res, 413, INVALID_REQUEST, err.message);
      return fail(res, 400, PARSE_ERROR, `Parse error: the body is not JSON (${(err as Error).message}).`);
    }
    let session = caller.session;
    if (!session) {
      if (await this.stateless.claims(req, body)) {
        return this.stateless.serve(req, res, body, caller.principal, caller.identity.key_id);
      }
      if (!isInitializeRequest(body)) {
        return fail(
          res,
          400,
          INVALID_REQUEST,
          'No session: send an initialize request first (without Mcp-Session-Id), or speak the stateless ' +
            '2026-07-28 revision (server/discover, the _meta envelope on every request).',
        );
      }
      if (!this.sessions.hasRoom()) {
        return fail(res, 503, REFUSED, 'This gateway has as many sessions open as it may; try again later.');
      }
      session = this.sessions.open(caller.principal, caller.identity.key_id);
    }
    await session.transport.handleRequest(req, res, body);
  }

  @Get()
  async get(@Req() req: IncomingMessage, @Res() res: ServerResponse): Promise<void> {
    const caller = await this.admit(req, res);
    if (!caller) return;
    if (!caller.session)
      return fail(res, 400, INVALID_REQUEST, 'GET /mcp needs the Mcp-Session-Id of an open session.');
    await caller.session.transport.handleRequest(req, res);
  }

  @Delete()
  async remove(@Req() req: IncomingMessage, @Res() res: ServerResponse): Promise<void> {
    const caller = await this.admit(req, res);
    if (!caller) return;
    if (!caller.session) return fail(res, 400, INVALID_REQUEST, 'DELETE /mcp needs the Mcp-Session-Id of a session.');
    await caller.session.transport.handleRequest(req, res);
  }

  /** The checks every request passes; answers the refusal itself and returns `undefined` when there is one. */
  private async admit(
    req: IncomingMessage,
    res: ServerResponse,
  ): Promise<
    | {
        readonly identity: AgentIdentity;
        readonly principal: { tenant: string; agentId: string; deviceId: string | null };
        readonly session: McpSession | undefined;
      }
    | undefined
  > {
    const problem = originProblem(
      header(req, 'host'),
      header(req, 'origin'),
      this.config.allowedHosts,
      this.config.allowedOrigins,
    );
    if (problem) return void fail(res, 403, REFUSED, problem);
    let identity;
    try {
      identity = await this.infra.authenticator.fromHeader(header(req, 'authorization'));
    } catch (err) {
      if (err instanceof UnauthenticatedError) return void unauthorized(res, err.message);
      this.infra.logger.warn({ err: (err as Error).message }, 'an API key could not be checked');
      return void fail(res, 503, REFUSED, 'The API key could not be checked just now; try again.');
    }
    if (!identity) {
      return void unauthorized(res, 'The MCP endpoint needs an agent API key: send Authorization: Bearer ormz_….');
    }
    if (identity.kind !== 'agent') {
      return void fail(
        res,
        403,
        REFUSED,
        `The MCP endpoint serves agents: ${identity.subject} is not one; use an agent's API key.`,
      );
    }
    const device = deviceOf(header(req, DEVICE_HEADER), identity.tenant);
    if ('problem' in device) return void fail(res, device.forbidden ? 403 : 400, REFUSED, device.problem);
    const principal = { tenant: identity.tenant, agentId: identity.agent_id, deviceId: device.deviceId };
    const sessionId = header(req, SESSION_HEADER);
    if (sessionId === undefined) return { identity, principal, session: undefined };
    const session = this.sessions.find(sessionId, identity.key_id);
    // Another key's session is not found either: a session id tells nothing to whoever holds it without its key.
    if (!session)
      return void fail(
        res,
        404,
        REFUSED,
        'Session not found: it ended or was never opened with this key; initialize a new one.',
      );
    return { identity, principal: session.principal, session };
  }
}

function header(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

function fail(res: ServerResponse, status: number, code: number, message: string): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }));
}

function unauthorized(res: ServerResponse, message: string): void {
  res.setHeader('www-authenticate', 'Bearer realm="ormuz"');
  fail(res, 401, REFUSED, message);
}
