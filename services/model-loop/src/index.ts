// Entry points for tests and the demo orchestrator: start model-loop in-process with a given configuration.
export { modelLoopService } from './service.js';
export { ModelLoopModule, type ModelLoopModuleOptions } from './app.module.js';
export { loadModelLoopConfig, type ModelLoopConfig } from './config.js';
export { MODEL_LOOP_SCHEMA, modelLoopMigrations } from './persistence/migrations.js';
export { MODEL_LOOP_STREAMS } from './config.js';
export {
  LARGE_MODEL,
  type ModelProfile,
  type ModelProvider,
  type ModelReply,
  type ModelRequest,
  type ModelToolRequest,
  type ToolOffer,
} from './domain/model-provider.js';
export {
  ScriptedProvider,
  demoScript,
  directoryScript,
  observerScript,
  DEMO_MESSAGE,
  DIRECTORY_QUERY,
  SCRIPTS,
  SMALL_MODEL,
  type Script,
  type ScriptEntry,
} from './providers/scripted.provider.js';
export { loadModelProvidersConfig, type ModelProvidersConfig } from './config.js';
export { httpModelProviders } from './providers/http-providers.js';
export { OpenAiChatProvider, type OpenAiChatSettings } from './providers/openai-chat/openai-chat.provider.js';
export { OpenAiResponsesProvider } from './providers/openai-responses/openai-responses.provider.js';
export { AnthropicProvider } from './providers/anthropic/anthropic.provider.js';
export type { ProviderSettings } from './providers/common/settings.js';
export type { HttpSettings, RetryLog } from './providers/http/provider-http.js';
export { ModelUnavailableError } from './domain/errors.js';
