import { splitToolName } from '@ormuz/catalog';
import { ConfigError, intFrom, loadBaseConfig, type BaseConfig, type Env } from '@ormuz/service-kit';
import type { ConversationLimits } from './domain/conversation.js';

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
}

/**
 * Reads the configuration. Limits: `MODEL_LOOP_MAX_STEPS` (model turns, default 12), `MODEL_LOOP_MAX_TOOL_CALLS`
 * (default 32), `MODEL_LOOP_MAX_TOKENS` (input plus output over all turns, default 200,000) and
 * `MODEL_LOOP_MAX_WALL_TIME_MS` (default 1 hour, long enough for an owner to answer a 15-minute approval).
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
    }),
    toolResultMaxBytes: intFrom(env, 'MODEL_LOOP_TOOL_RESULT_MAX_BYTES', 8 * 1024, 256, 64 * 1024),
    modelAttempts: intFrom(env, 'MODEL_LOOP_MODEL_ATTEMPTS', 3, 1, 20),
    policyTimeoutMs: intFrom(env, 'MODEL_LOOP_POLICY_TIMEOUT_MS', 5000, 100, 120_000),
    toolsCacheMs: intFrom(env, 'MODEL_LOOP_TOOLS_CACHE_MS', 5000, 0, 60_000),
    pinnedTools: pinnedToolsFrom(env.MODEL_LOOP_PINNED_TOOLS),
  });
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
 * Streams model-loop declares at start: `conversations`, which it owns, and `calls`, which policy owns and model-loop
 * reads for outcomes; declaring it too (idempotent) means the two services can start in any order.
 */
export const MODEL_LOOP_STREAMS = ['conversations', 'calls'] as const;
