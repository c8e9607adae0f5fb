/** OpenAI models through the Responses API: `openai-responses:<model>`, key in OPENAI_API_KEY by default. */
import type { ModelProfile, ModelProvider, ModelReply, ModelRequest } from '../../domain/model-provider.js';
import { ProviderHttp, readJson, type RetryLog } from '../http/provider-http.js';
import { readSse, sseJson } from '../http/sse.js';
import { apiKey, withModelSettings, type Environment, type ProviderSettings } from '../common/settings.js';
import { ResponsesStream, responsesOutcome, responsesReply, responsesRequestBody } from './responses.mapping.js';

const PREFIX = 'openai-responses:';

export class OpenAiResponsesProvider implements ModelProvider {
  readonly examples: readonly string[] = ['openai-responses:gpt-4.1'];
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
    const headers: Record<string, string> = {};
    if (key !== '') headers.authorization = `Bearer ${key}`;
    if (s.stream) headers.accept = 'text/event-stream';
    const body = responsesRequestBody(request, {
      model: request.model.slice(PREFIX.length),
      encode: s.profile.encodeToolNames,
      maxOutputTokens: s.maxOutputTokens,
      stream: s.stream,
    });
    const post = {
      model: request.model,
      url: `${s.baseUrl}/responses`,
      headers,
      body,
      secrets: [key],
      ...(request.signal ? { signal: request.signal } : {}),
    };
    const outcome = await this.http.post(post, async (response, _signal, attempt) => {
      if (!s.stream) return responsesOutcome(await readJson(response));
      const folded = new ResponsesStream();
      for await (const event of readSse(response.body!)) {
        const text = folded.add(sseJson(event));
        if (text !== '') request.onText?.(text, attempt);
        if (folded.done) break;
      }
      return folded.outcome();
    });
    return responsesReply(outcome, request, s.maxToolCallsPerTurn);
  }
}
