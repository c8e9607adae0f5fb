/**
 * The HTTP model providers as configured: `openai:`, `openai-responses:` and `anthropic:` always (a missing key fails
 * the turn with a message naming its variable), `openai-compatible:` for conversations with a base URL (configured,
 * or in the conversation's model settings).
 */
import type { ModelProvidersConfig } from '../config.js';
import { LARGE_MODEL, type ModelProfile, type ModelProvider } from '../domain/model-provider.js';
import { AnthropicProvider } from './anthropic/anthropic.provider.js';
import type { HttpSettings, RetryLog } from './http/provider-http.js';
import { OpenAiChatProvider } from './openai-chat/openai-chat.provider.js';
import { OpenAiResponsesProvider } from './openai-responses/openai-responses.provider.js';
import type { Environment } from './common/settings.js';

/** A large model whose API forbids dots in function names (all three APIs: `^[a-zA-Z0-9_-]+$`). */
const LARGE_ENCODED: ModelProfile = Object.freeze({ ...LARGE_MODEL, encodeToolNames: true });

export function httpModelProviders(config: ModelProvidersConfig, env: Environment, log?: RetryLog): ModelProvider[] {
  const http: HttpSettings = {
    timeoutMs: config.timeoutMs,
    attempts: config.maxRetries + 1,
    baseDelayMs: config.retryBaseMs,
    maxDelayMs: config.retryMaxDelayMs,
  };
  const common = {
    http,
    maxToolCallsPerTurn: config.maxToolCallsPerTurn,
    maxOutputTokens: config.maxOutputTokens,
    stream: config.stream,
    profile: LARGE_ENCODED,
  };
  const providers: ModelProvider[] = [
    new OpenAiChatProvider(
      {
        ...common,
        ...config.openai,
        prefix: 'openai:',
        examples: ['openai:gpt-4.1'],
        maxTokensField: 'max_completion_tokens',
      },
      env,
      log,
    ),
    new OpenAiResponsesProvider({ ...common, ...config.openai }, env, log),
    new AnthropicProvider({ ...common, ...config.anthropic }, env, log),
  ];
  // Without a configured base URL it serves only conversations whose settings give one (an agent's, or a start's).
  const c = config.compatible;
  providers.push(
    new OpenAiChatProvider(
      {
        ...common,
        baseUrl: c?.baseUrl ?? '',
        apiKeyEnv: c?.apiKeyEnv ?? '',
        prefix: 'openai-compatible:',
        examples: ['openai-compatible:<model>'],
        maxTokensField: 'max_tokens',
        ...(c?.azureApiVersion ? { azureApiVersion: c.azureApiVersion } : {}),
        profile: c ? { tier: c.tier, schemaBudgetTokens: c.schemaBudgetTokens, encodeToolNames: true } : LARGE_ENCODED,
      },
      env,
      log,
    ),
  );
  return providers;
}
