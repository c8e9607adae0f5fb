import { splitToolName } from '@ormuz/catalog';
import { ConfigError, intFrom, loadBaseConfig, type BaseConfig, type Env } from '@ormuz/service-kit';
import type { TenantDayLimitsV1 } from '@ormuz/contracts';
import type { ConversationLimits } from './domain/conversation.js';
import { DEFAULT_PRICES, parsePrices, type PriceTable } from './providers/common/prices.js';

/** Where one HTTP model API is and which environment variable holds its key (never the key itself). */
export interface ModelApiConfig {
  /** Base URL the API's paths are appended to, without a trailing slash. */
  readonly baseUrl: string;
  /** Name of the environment variable holding the API key; `''` sends none (a local server). */
  readonly apiKeyEnv: string;
}

/** Settings of the HTTP model providers (`openai:`, `openai-compatible:`, `openai-responses:`, `anthropic:`). */
export interface ModelProvidersConfig {
  /** Bound of one HTTP attempt, in ms. Env `ORMUZ_MODEL_TIMEOUT_MS`, default 120,000. */
  readonly timeoutMs: number;
  /** Retries of a request after a 408/409/429/5xx or a connection error. Env `ORMUZ_MODEL_MAX_RETRIES`, default 2. */
  readonly maxRetries: number;
  /** First backoff ceiling, in ms, doubling per retry (full jitter). Env `ORMUZ_MODEL_RETRY_BASE_MS`, default 500. */
  readonly retryBaseMs: number;
  /** Longest wait before a retry, `Retry-After` included, in ms. Env `ORMUZ_MODEL_RETRY_MAX_DELAY_MS`, default 20,000. */
  readonly retryMaxDelayMs: number;
  /** Most tool requests run from one model turn. Env `ORMUZ_MODEL_MAX_TOOL_CALLS_PER_TURN`, default 16 (1 to 64). */
  readonly maxToolCallsPerTurn: number;
  /** Output token bound of a turn. Env `ORMUZ_MODEL_MAX_OUTPUT_TOKENS`, default 4096. */
  readonly maxOutputTokens: number;
  /** Stream replies over SSE. Env `ORMUZ_MODEL_STREAM` (`true`/`false`), default false. */
  readonly stream: boolean;
  /** `openai:` and `openai-responses:`. Env `ORMUZ_OPENAI_BASE_URL`, `ORMUZ_OPENAI_API_KEY_ENV` (default OPENAI_API_KEY). */
  readonly openai: ModelApiConfig;
  /** `anthropic:`. Env `ORMUZ_ANTHROPIC_BASE_URL`, `ORMUZ_ANTHROPIC_API_KEY_ENV` (default ANTHROPIC_API_KEY). */
  readonly anthropic: ModelApiConfig;
  /**
   * `openai-compatible:`, served only when `ORMUZ_OPENAI_COMPATIBLE_BASE_URL` is set (vLLM, Ollama, llama.cpp, LM
   * Studio, Azure OpenAI). `ORMUZ_OPENAI_COMPATIBLE_API_KEY_ENV` (default none), `ORMUZ_OPENAI_COMPATIBLE_AZURE_API_VERSION`
   * (Azure: `api-key` header and `api-version` query), `ORMUZ_OPENAI_COMPATIBLE_TIER` (`large` or `small`, default
   * large) and `ORMUZ_OPENAI_COMPATIBLE_SCHEMA_BUDGET_TOKENS` (small tier, default 1200).
   */
  readonly compatible:
    | (ModelApiConfig & {
        readonly azureApiVersion: string | null;
        readonly tier: 'large' | 'small';
        readonly schemaBudgetTokens: number;
      })
    | null;
}

export interface ModelLoopConfig extends BaseConfig {
  /** Bounds every new conversation gets (recorded in its start event, so later config changes do not retarget it). */
  readonly limits: ConversationLimits;
  /**
   * Bound of the executor data fenced into one tool result, in UTF-8 bytes. Env `MODEL_LOOP_TOOL_RESULT_MAX_BYTES`,
   * default 8 KiB, 256 to 64 KiB.
   */
  readonly toolResultMaxBytes: number;
  /** Attempts at one model turn before the conversation completes as failed. Env `MODEL_LOOP_MODEL_ATTEMPTS`, default 3. */
  readonly modelAttempts: number;
  /** How long to wait for policy to answer a submit, in ms. Env `MODEL_LOOP_POLICY_TIMEOUT_MS`, default 5000. */
  readonly policyTimeoutMs: number;
  /**
   * How long an agent's offered tools (from `policy.tools`) are reused before policy is asked again, in ms; per
   * tenant and agent, never shared across tenants. Env `MODEL_LOOP_TOOLS_CACHE_MS`, default 5000, 0 turns it off.
   * A grant change reaches the model within this time; policy checks every call against the current grant anyway.
   */
  readonly toolsCacheMs: number;
  /**
   * Tools pinned by the owner per agent (`*` for every agent): their full schemas go to every model, whatever its
   * tier, when the agent is offered them. Env `MODEL_LOOP_PINNED_TOOLS`, JSON such as
   * `{"agent-1": ["device.screen_observe"], "*": []}`; default none. Added to a conversation's own `pinned_tools`.
   */
  readonly pinnedTools: Readonly<Record<string, readonly string[]>>;
  /** The HTTP model providers; see {@link ModelProvidersConfig}. */
  readonly models: ModelProvidersConfig;
  /**
   * US dollars per million input and output tokens, per model: the defaults of `providers/common/prices.ts` with
   * `MODEL_LOOP_MODEL_PRICES` (JSON, e.g. `{"openai:gpt-4o": {"input": 2.5, "output": 10}}`) merged over them.
   */
  readonly prices: PriceTable;
  /**
   * Every tenant's daily limits unless it has its own (`ormuz tenant limits set`), per UTC day over all its
   * conversations: `MODEL_LOOP_TENANT_DAY_STEPS` (model turns), `MODEL_LOOP_TENANT_DAY_TOOL_CALLS`,
   * `MODEL_LOOP_TENANT_DAY_TOKENS` (input plus output) and `MODEL_LOOP_TENANT_DAY_COST_USD`. Unset: no limit.
   */
  readonly tenantDayLimits: TenantDayLimitsV1;
}

/**
 * Reads the configuration. Limits: `MODEL_LOOP_MAX_STEPS` (model turns, default 12), `MODEL_LOOP_MAX_TOOL_CALLS`
 * (default 32), `MODEL_LOOP_MAX_TOKENS` (input plus output over all turns, default 200,000) and
 * `MODEL_LOOP_MAX_WALL_TIME_MS` (default 1 hour, long enough for an owner to answer a 15-minute approval) and
 * `MODEL_LOOP_MAX_COST_USD` (US dollars per conversation, priced from {@link ModelLoopConfig.prices}; default none).
 * Throws ConfigError naming the variable.
 */
export function loadModelLoopConfig(env: Env): ModelLoopConfig {
  return Object.freeze({
    ...loadBaseConfig(env),
    limits: Object.freeze({
      maxSteps: intFrom(env, 'MODEL_LOOP_MAX_STEPS', 12, 1, 1000),
      maxToolCalls: intFrom(env, 'MODEL_LOOP_MAX_TOOL_CALLS', 32, 0, 10_000),
      maxTokens: intFrom(env, 'MODEL_LOOP_MAX_TOKENS', 200_000, 1, 1_000_000_000),
      maxWallTimeMs: intFrom(env, 'MODEL_LOOP_MAX_WALL_TIME_MS', 3_600_000, 1000, 7 * 24 * 3_600_000),
      maxCostUsd: dollarsFrom(env, 'MODEL_LOOP_MAX_COST_USD'),
    }),
    toolResultMaxBytes: intFrom(env, 'MODEL_LOOP_TOOL_RESULT_MAX_BYTES', 8 * 1024, 256, 64 * 1024),
    modelAttempts: intFrom(env, 'MODEL_LOOP_MODEL_ATTEMPTS', 3, 1, 20),
    policyTimeoutMs: intFrom(env, 'MODEL_LOOP_POLICY_TIMEOUT_MS', 5000, 100, 120_000),
    toolsCacheMs: intFrom(env, 'MODEL_LOOP_TOOLS_CACHE_MS', 5000, 0, 60_000),
    pinnedTools: pinnedToolsFrom(env.MODEL_LOOP_PINNED_TOOLS),
    models: loadModelProvidersConfig(env),
    prices: pricesFrom(env.MODEL_LOOP_MODEL_PRICES),
    tenantDayLimits: tenantDayLimitsFrom(env),
  });
}

function tenantDayLimitsFrom(env: Env): TenantDayLimitsV1 {
  const count = (name: string) => (env[name]?.trim() ? intFrom(env, name, 0, 0, Number.MAX_SAFE_INTEGER) : null);
  const limits: Record<string, number> = {};
  const steps = count('MODEL_LOOP_TENANT_DAY_STEPS');
  const calls = count('MODEL_LOOP_TENANT_DAY_TOOL_CALLS');
  const tokens = count('MODEL_LOOP_TENANT_DAY_TOKENS');
  const cost = dollarsFrom(env, 'MODEL_LOOP_TENANT_DAY_COST_USD');
  if (steps !== null) limits.day_steps = steps;
  if (calls !== null) limits.day_tool_calls = calls;
  if (tokens !== null) limits.day_tokens = tokens;
  if (cost !== null) limits.day_cost_usd = cost;
  return Object.freeze(limits);
}

function dollarsFrom(env: Env, name: string): number | null {
  const raw = env[name]?.trim();
  if (raw === undefined || raw === '') return null;
  const value = Number(raw);
  if (!/^\d+(\.\d+)?$/.test(raw) || !(value <= 1_000_000_000)) {
    throw new ConfigError(`${name}=${raw} is not an amount of US dollars such as 2 or 0.50 (unset it for no bound).`);
  }
  return value;
}

function pricesFrom(raw: string | undefined): PriceTable {
  if (raw === undefined || raw.trim() === '') return DEFAULT_PRICES;
  const table = parsePrices(raw);
  if (table instanceof Error) throw new ConfigError(`MODEL_LOOP_MODEL_PRICES is not a price table: ${table.message}`);
  return table;
}

/** Reads the HTTP model providers' settings; throws ConfigError naming the variable. */
export function loadModelProvidersConfig(env: Env): ModelProvidersConfig {
  const compatibleUrl = env.ORMUZ_OPENAI_COMPATIBLE_BASE_URL?.trim();
  const tier = env.ORMUZ_OPENAI_COMPATIBLE_TIER?.trim() || 'large';
  if (tier !== 'large' && tier !== 'small') {
    throw new ConfigError(`ORMUZ_OPENAI_COMPATIBLE_TIER=${tier} is neither "large" nor "small".`);
  }
  const stream = env.ORMUZ_MODEL_STREAM?.trim() || 'false';
  if (stream !== 'true' && stream !== 'false') {
    throw new ConfigError(`ORMUZ_MODEL_STREAM=${stream} is neither "true" nor "false".`);
  }
  return Object.freeze({
    timeoutMs: intFrom(env, 'ORMUZ_MODEL_TIMEOUT_MS', 120_000, 100, 3_600_000),
    maxRetries: intFrom(env, 'ORMUZ_MODEL_MAX_RETRIES', 2, 0, 10),
    retryBaseMs: intFrom(env, 'ORMUZ_MODEL_RETRY_BASE_MS', 500, 1, 60_000),
    retryMaxDelayMs: intFrom(env, 'ORMUZ_MODEL_RETRY_MAX_DELAY_MS', 20_000, 1, 600_000),
    maxToolCallsPerTurn: intFrom(env, 'ORMUZ_MODEL_MAX_TOOL_CALLS_PER_TURN', 16, 1, 64),
    maxOutputTokens: intFrom(env, 'ORMUZ_MODEL_MAX_OUTPUT_TOKENS', 4096, 1, 1_000_000),
    stream: stream === 'true',
    openai: Object.freeze({
      baseUrl: urlFrom(env, 'ORMUZ_OPENAI_BASE_URL', 'https://api.openai.com/v1'),
      apiKeyEnv: keyEnvFrom(env, 'ORMUZ_OPENAI_API_KEY_ENV', 'OPENAI_API_KEY'),
    }),
    anthropic: Object.freeze({
      baseUrl: urlFrom(env, 'ORMUZ_ANTHROPIC_BASE_URL', 'https://api.anthropic.com/v1'),
      apiKeyEnv: keyEnvFrom(env, 'ORMUZ_ANTHROPIC_API_KEY_ENV', 'ANTHROPIC_API_KEY'),
    }),
    compatible: compatibleUrl
      ? Object.freeze({
          baseUrl: urlFrom(env, 'ORMUZ_OPENAI_COMPATIBLE_BASE_URL', ''),
          apiKeyEnv: keyEnvFrom(env, 'ORMUZ_OPENAI_COMPATIBLE_API_KEY_ENV', ''),
          azureApiVersion: env.ORMUZ_OPENAI_COMPATIBLE_AZURE_API_VERSION?.trim() || null,
          tier,
          schemaBudgetTokens: intFrom(env, 'ORMUZ_OPENAI_COMPATIBLE_SCHEMA_BUDGET_TOKENS', 1200, 100, 1_000_000),
        })
      : null,
  });
}

function urlFrom(env: Env, name: string, fallback: string): string {
  const raw = env[name]?.trim() || fallback;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(`${name}=${raw} is not a URL. Write the API's base URL, e.g. http://127.0.0.1:11434/v1.`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new ConfigError(`${name}=${raw} is not an http(s) URL.`);
  }
  if (url.username || url.password) {
    throw new ConfigError(`${name} must not carry credentials; put the key in the variable its *_API_KEY_ENV names.`);
  }
  return raw.replace(/\/+$/, '');
}

function keyEnvFrom(env: Env, name: string, fallback: string): string {
  const raw = env[name]?.trim() ?? fallback;
  if (raw !== '' && !/^[A-Za-z_][A-Za-z0-9_]*$/.test(raw)) {
    throw new ConfigError(
      `${name}=${raw} is not an environment variable name (it names the variable that holds the key).`,
    );
  }
  return raw;
}

/** The pins configured for `agentId`: its own and those for every agent (`*`). */
export function configuredPins(config: Pick<ModelLoopConfig, 'pinnedTools'>, agentId: string): string[] {
  return [
    ...(config.pinnedTools['*'] ?? []),
    ...(Object.hasOwn(config.pinnedTools, agentId) ? config.pinnedTools[agentId]! : []),
  ];
}

function pinnedToolsFrom(raw: string | undefined): Readonly<Record<string, readonly string[]>> {
  if (raw === undefined || raw.trim() === '') return Object.freeze({});
  const fix = 'Write a JSON object from agent id (or "*") to a list of tool names, e.g. {"agent-1": ["device.tap"]}.';
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw new ConfigError(`MODEL_LOOP_PINNED_TOOLS is not JSON. ${fix}`);
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new ConfigError(`MODEL_LOOP_PINNED_TOOLS is not a JSON object. ${fix}`);
  }
  const out: Record<string, readonly string[]> = {};
  for (const [agent, tools] of Object.entries(parsed)) {
    if (!Array.isArray(tools) || !tools.every((t) => typeof t === 'string' && splitToolName(t))) {
      throw new ConfigError(`MODEL_LOOP_PINNED_TOOLS["${agent}"] is not a list of <extension>.<tool> names. ${fix}`);
    }
    out[agent] = Object.freeze([...new Set(tools as string[])]);
  }
  return Object.freeze(out);
}

export const MODEL_LOOP_CONFIG = Symbol('model-loop.config');

/**
 * Streams model-loop declares at start: `conversations` and `usage` (tenants' days), which it owns, and `calls`, which policy owns and model-loop
 * reads for outcomes; declaring it too (idempotent) means the two services can start in any order.
 */
export const MODEL_LOOP_STREAMS = ['conversations', 'usage', 'calls'] as const;
