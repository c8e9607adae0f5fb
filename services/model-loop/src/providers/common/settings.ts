/**
 * What every HTTP model provider is configured with. The API key itself is never configuration: only the name of the
 * environment variable that holds it, read at each request, so a config dump or a log of the settings shows no key.
 */
import { ModelUnavailableError } from '../../domain/errors.js';
import type { ModelProfile } from '../../domain/model-provider.js';
import type { HttpSettings } from '../http/provider-http.js';

export interface ProviderSettings {
  /** Base URL the API's paths are appended to, without a trailing slash (e.g. `https://api.openai.com/v1`). */
  readonly baseUrl: string;
  /** Name of the environment variable holding the API key; `''` sends no key (a local server). */
  readonly apiKeyEnv: string;
  readonly http: HttpSettings;
  /** Most tool requests run from one turn; the ones past it are answered with an error for the model. */
  readonly maxToolCallsPerTurn: number;
  /** Output token bound sent with each request. */
  readonly maxOutputTokens: number;
  /** Stream replies (SSE): text reaches `onText` as it arrives. */
  readonly stream: boolean;
  /** The profile of every model of this provider. */
  readonly profile: ModelProfile;
}

/** Environment variables, as `process.env` holds them. */
export type Environment = Readonly<Record<string, string | undefined>>;

/**
 * The API key from the environment, or `''` when the provider sends none. Throws ModelUnavailableError, naming the
 * variable (never a value), when the provider needs a key and the variable is unset.
 */
export function apiKey(settings: ProviderSettings, env: Environment, model: string): string {
  if (settings.apiKeyEnv === '') return '';
  const key = (env[settings.apiKeyEnv] ?? '').trim();
  if (key === '') {
    throw new ModelUnavailableError(
      model,
      `the environment variable ${settings.apiKeyEnv} holding its API key is not set`,
    );
  }
  return key;
}
