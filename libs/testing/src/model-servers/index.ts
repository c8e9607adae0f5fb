export {
  ApiRejection,
  ModelServer,
  type ModelServerStep,
  type ReceivedRequest,
  type ScriptedStop,
  type ScriptedToolCall,
} from './model-server.js';
export { OpenAiChatServer, type AzureDeployment } from './openai-chat.server.js';
export { OpenAiResponsesServer } from './openai-responses.server.js';
export { AnthropicServer } from './anthropic.server.js';
