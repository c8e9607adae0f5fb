/**
 * Claude models through the Anthropic Messages API: `anthropic:<model>`. The key (env ANTHROPIC_API_KEY by default)
 * goes in `x-api-key`, with `anthropic-version: 2023-06-01`.
 */
import type { ModelProfile, ModelProvider, ModelReply, ModelRequest } from '../../domain/model-provider.js';
import { ProviderHttp, readJson, type RetryLog } from '../http/provider-http.js';
import { readSse, sseJson } from '../http/sse.js';
import { apiKey, withModelSettings, type Environment, type ProviderSettings } from '../common/settings.js';
import {
  ANTHROPIC_VERSION,
  MessagesStream,
  messagesOutcome,
  messagesReply,
  messagesRequestBody,
} from './messages.mapping.js';

const PREFIX = 'anthropic:';

export class AnthropicProvider implements ModelProvider {
  readonly examples: readonly string[] = ['anthropic:claude-sonnet-4-5'];
  private readonly http: ProviderHttp;

  constructor(
    private readonly settings: ProviderSettings,
    private readonly env: Environment = process.env,
    log?: RetryLog,
  ) {
    this.http = new ProviderHttp(settings.http, log);
  }

  supports(model: string): boolean {
    return model.startsWith(PREFIX) && model.length > PREFIX.length;
  }

  profile(_model: string): ModelProfile {
    return this.settings.profile;
  }

  async complete(request: ModelRequest): Promise<ModelReply> {
    const s = withModelSettings(this.settings, request.settings);
    const key = apiKey(s, this.env, request.model);
    const headers: Record<string, string> = { 'anthropic-version': ANTHROPIC_VERSION };
    if (key !== '') headers['x-api-key'] = key;
    if (s.stream) headers.accept = 'text/event-stream';
    const body = messagesRequestBody(request, {
      model: request.model.slice(PREFIX.length),
      encode: s.profile.encodeToolNames,
      maxOutputTokens: s.maxOutputTokens,
      stream: s.stream,
    });
    const post = {
      model: request.model,
      url: `${s.baseUrl}/messages`,
      headers,
      body,
      secrets: [key],
      ...(request.signal ? { signal: request.signal } : {}),
    };
    const outcome = await this.http.post(post, async (response, _signal, attempt) => {
      if (!s.stream) return messagesOutcome(await readJson(response));
      const folded = new MessagesStream();
      for await (const event of readSse(response.body!)) {
        const text = folded.add(sseJson(event));
        if (text !== '') request.onText?.(text, attempt);
        if (folded.done) break;
      }
      return folded.outcome();
    });
    return messagesReply(outcome, request, s.maxToolCallsPerTurn);
  }
}
