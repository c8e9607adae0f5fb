import { ConfigError, intFrom, loadBaseConfig, type BaseConfig, type Env } from '@ormuz/service-kit';

export interface McpGatewayConfig extends BaseConfig {
  /** HTTP port of the MCP endpoint (`/mcp`). Env `MCP_GATEWAY_PORT`, default 8083 (0: any free port). */
  readonly httpPort: number;
  /** HTTP bind address. Env `MCP_GATEWAY_HOST`, default 127.0.0.1. */
  readonly httpHost: string;
  /**
   * Host names (no port) a request's `Host` may carry, against DNS rebinding. Env `MCP_ALLOWED_HOSTS`, comma
   * separated; default `localhost,127.0.0.1,[::1]`, right for a gateway bound to loopback. Behind a proxy, name the
   * public host.
   */
  readonly allowedHosts: readonly string[];
  /**
   * Browser origins allowed to call the endpoint (a request with any other `Origin` is refused; one without `Origin`,
   * as every non-browser client sends, is not). Env `MCP_ALLOWED_ORIGINS`, comma separated, default none.
   */
  readonly allowedOrigins: readonly string[];
  /** Largest JSON-RPC body accepted, in bytes. Env `MCP_MAX_BODY_BYTES`, default 1048576. */
  readonly maxBodyBytes: number;
  /**
   * How long `tools/call` waits for a call that runs to reach its outcome before it answers "still running", in ms.
   * Env `MCP_CALL_WAIT_MS`, default 30000.
   */
  readonly callWaitMs: number;
  /**
   * How long a call run as a task (2025-11-25 tasks) is waited for, the owner's decision included, in ms; the task's
   * TTL when the client asks for none. Env `MCP_TASK_WAIT_MS`, default 86400000 (a day).
   */
  readonly taskWaitMs: number;
  /**
   * How long a waiting call goes at most without its status being read, in ms: an append to the call is heard at once
   * (CallAppends), this bounds what a missed one costs. Env `MCP_CALL_POLL_MS`, default 1000.
   */
  readonly callPollMs: number;
  /**
   * Most UTF-8 bytes of a call's data in one result (the text's fenced data; `structuredContent.outcome` is left out
   * of a result cut short): the rest is read with `ormuz.read_more`. Env `MCP_RESULT_MAX_BYTES`, default 8192, as a
   * model-loop conversation's.
   */
  readonly resultMaxBytes: number;
  /** Tools per `tools/list` page. Env `MCP_TOOLS_PAGE_SIZE`, default 100. */
  readonly toolsPageSize: number;
  /** Open sessions at most; a new one beyond is refused with 503. Env `MCP_MAX_SESSIONS`, default 1000. */
  readonly maxSessions: number;
  /** A session unused this long is closed, in ms. Env `MCP_SESSION_IDLE_MS`, default 1800000 (30 minutes). */
  readonly sessionIdleMs: number;
  /** How long one question to policy may take, in ms. Env `MCP_POLICY_TIMEOUT_MS`, default 5000. */
  readonly policyTimeoutMs: number;
  /**
   * How long a `tools/call` without the client's operation id is remembered, in ms: the same call (same principal,
   * tool and canonical arguments) within it is answered with the original call, never run again — a client re-sending
   * a request whose answer it lost. 0 turns it off. Env `MCP_RESEND_WINDOW_MS`, default 60000.
   */
  readonly resendWindowMs: number;
}

function listFrom(env: Env, name: string, fallback: readonly string[]): readonly string[] {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return Object.freeze([...fallback]);
  const items = raw.split(',').map((s) => s.trim());
  if (items.some((s) => s === ''))
    throw new ConfigError(`${name}=${raw} has an empty entry; separate names by commas.`);
  return Object.freeze(items);
}

export function loadMcpGatewayConfig(env: Env): McpGatewayConfig {
  return Object.freeze({
    ...loadBaseConfig(env),
    httpPort: intFrom(env, 'MCP_GATEWAY_PORT', 8083, 0, 65535),
    httpHost: env.MCP_GATEWAY_HOST || '127.0.0.1',
    allowedHosts: listFrom(env, 'MCP_ALLOWED_HOSTS', ['localhost', '127.0.0.1', '[::1]']),
    allowedOrigins: listFrom(env, 'MCP_ALLOWED_ORIGINS', []),
    maxBodyBytes: intFrom(env, 'MCP_MAX_BODY_BYTES', 1024 * 1024, 1024, 64 * 1024 * 1024),
    callWaitMs: intFrom(env, 'MCP_CALL_WAIT_MS', 30_000, 0, 600_000),
    taskWaitMs: intFrom(env, 'MCP_TASK_WAIT_MS', 86_400_000, 1000, 30 * 86_400_000),
    callPollMs: intFrom(env, 'MCP_CALL_POLL_MS', 1000, 10, 60_000),
    resultMaxBytes: intFrom(env, 'MCP_RESULT_MAX_BYTES', 8 * 1024, 256, 1024 * 1024),
    toolsPageSize: intFrom(env, 'MCP_TOOLS_PAGE_SIZE', 100, 1, 10_000),
    maxSessions: intFrom(env, 'MCP_MAX_SESSIONS', 1000, 1, 1_000_000),
    sessionIdleMs: intFrom(env, 'MCP_SESSION_IDLE_MS', 1_800_000, 1000, 86_400_000),
    policyTimeoutMs: intFrom(env, 'MCP_POLICY_TIMEOUT_MS', 5000, 100, 120_000),
    resendWindowMs: intFrom(env, 'MCP_RESEND_WINDOW_MS', 60_000, 0, 3_600_000),
  });
}

export const MCP_GATEWAY_CONFIG = Symbol('mcp-gateway.config');
