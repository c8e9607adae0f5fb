/**
 * Models behind an OpenAI Chat Completions endpoint. One class serves two name prefixes: `openai:<model>` (OpenAI
 * itself, key in OPENAI_API_KEY by default) and `openai-compatible:<model>` (any server speaking the same wire
 * format at a configured base URL: vLLM, Ollama, llama.cpp, LM Studio, or Azure OpenAI with `azureApiVersion`).
 */
import type { ModelSettingsV1 } from '@ormuz/contracts';
import type { ModelProfile, ModelProvider, ModelReply, ModelRequest } from '../../domain/model-provider.js';
import { ProviderHttp, readJson, type RetryLog } from '../http/provider-http.js';
import { readSse, sseJson } from '../http/sse.js';
import { apiKey, withModelSettings, type Environment, type ProviderSettings } from '../common/settings.js';
import {
  ChatStream,
  chatOutcome,
  chatReply,
  chatRequestBody,
  type MaxTokensField,
} from './chat-completions.mapping.js';

export interface OpenAiChatSettings extends ProviderSettings {
  /** The model-name prefix served, with its colon: `openai:` or `openai-compatible:`. */
  readonly prefix: string;
  /** Names listed in an `unknown_model` error. */
  readonly examples: readonly string[];
  readonly maxTokensField: MaxTokensField;
  /**
   * Set for Azure OpenAI: the key goes in an `api-key` header (not `Authorization: Bearer`) and this version in the
   * `api-version` query parameter; the base URL is the deployment's (`https://<resource>.openai.azure.com/openai/deployments/<name>`).
   */
  readonly azureApiVersion?: string;
}

export class OpenAiChatProvider implements ModelProvider {
  private readonly http: ProviderHttp;

  constructor(
    private readonly settings: OpenAiChatSettings,
    private readonly env: Environment = process.env,
    log?: RetryLog,
  ) {
    this.http = new ProviderHttp(settings.http, log);
  }

  get examples(): readonly string[] {
    return this.settings.examples;
  }

  /** A model of the prefix, when a base URL is known: configured, or in the conversation's settings. */
  supports(model: string, settings?: ModelSettingsV1): boolean {
    const baseUrl = settings?.base_url ?? this.settings.baseUrl;
    return model.startsWith(this.settings.prefix) && model.length > this.settings.prefix.length && baseUrl !== '';
  }

  profile(_model: string): ModelProfile {
    return this.settings.profile;
  }

  async complete(request: ModelRequest): Promise<ModelReply> {
    const s = withModelSettings(this.settings, request.settings);
    const key = apiKey(s, this.env, request.model);
    const headers: Record<string, string> = {};
    if (key !== '') {
      if (s.azureApiVersion) headers['api-key'] = key;
      else headers.authorization = `Bearer ${key}`;
    }
    const query = s.azureApiVersion ? `?api-version=${encodeURIComponent(s.azureApiVersion)}` : '';
    const body = chatRequestBody(request, {
      model: request.model.slice(s.prefix.length),
      encode: s.profile.encodeToolNames,
      maxOutputTokens: s.maxOutputTokens,
      maxTokensField: s.maxTokensField,
      stream: s.stream,
    });
    if (s.stream) headers.accept = 'text/event-stream';
    const post = {
      model: request.model,
      url: `${s.baseUrl}/chat/completions${query}`,
      headers,
      body,
      secrets: [key],
      ...(request.signal ? { signal: request.signal } : {}),
    };
    const outcome = await this.http.post(post, async (response, _signal, attempt) => {
      if (!s.stream) return chatOutcome(await readJson(response));
      const folded = new ChatStream();
      for await (const event of readSse(response.body!)) {
        if (event.data === '[DONE]') break;
        const text = folded.add(sseJson(event));
        if (text !== '') request.onText?.(text, attempt);
      }
      return folded.outcome();
    });
    return chatReply(outcome, request, s.maxToolCallsPerTurn);
  }
}
