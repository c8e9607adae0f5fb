import { intFrom, loadBaseConfig, type BaseConfig, type Env } from '@ormuz/service-kit';
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
  });
}

export const MODEL_LOOP_CONFIG = Symbol('model-loop.config');

/**
 * Streams model-loop declares at start: `conversations`, which it owns, and `calls`, which policy owns and model-loop
 * reads for outcomes; declaring it too (idempotent) means the two services can start in any order.
 */
export const MODEL_LOOP_STREAMS = ['conversations', 'calls'] as const;
