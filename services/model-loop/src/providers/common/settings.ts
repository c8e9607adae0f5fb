/**
 * What every HTTP model provider is configured with. The API key itself is never configuration: only the name of the
 * environment variable that holds it, read at each request, so a config dump or a log of the settings shows no key.
 */
import { readFileSync } from 'node:fs';
import type { ModelSettingsV1 } from '@ormuz/contracts';
import { ModelUnavailableError } from '../../domain/errors.js';
import type { ModelProfile } from '../../domain/model-provider.js';
import type { HttpSettings } from '../http/provider-http.js';

export interface ProviderSettings {
  /** Base URL the API's paths are appended to, without a trailing slash (e.g. `https://api.openai.com/v1`). */
  readonly baseUrl: string;
  /** Name of the environment variable holding the API key; `''` sends no key (a local server). */
  readonly apiKeyEnv: string;
  /** A file holding the API key (a mounted secret), read at each request; wins over `apiKeyEnv` when set. */
  readonly apiKeyFile?: string;
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
 * The provider's settings with a conversation's model settings over them (base URL, key source, output bound,
 * streaming); the settings themselves unchanged when there are none.
 */
export function withModelSettings<S extends ProviderSettings>(settings: S, over: ModelSettingsV1 | undefined): S {
  if (!over) return settings;
  const keyOver = over.api_key_env !== undefined || over.api_key_file !== undefined;
  return {
    ...settings,
    ...(over.base_url !== undefined ? { baseUrl: over.base_url } : {}),
    ...(keyOver ? { apiKeyEnv: over.api_key_env ?? '', apiKeyFile: over.api_key_file } : {}),
    ...(over.max_output_tokens !== undefined ? { maxOutputTokens: over.max_output_tokens } : {}),
    ...(over.stream !== undefined ? { stream: over.stream } : {}),
  };
}

/**
 * The API key, read now from the file or the environment variable the settings name, or `''` when they name neither
 * (a local server). Throws ModelUnavailableError, naming the file or variable (never a value), when the named source
 * is unset, empty or unreadable.
 */
export function apiKey(settings: ProviderSettings, env: Environment, model: string): string {
  if (settings.apiKeyFile) {
    let key: string;
    try {
      key = readFileSync(settings.apiKeyFile, 'utf8').trim();
    } catch (err) {
      const why = (err as NodeJS.ErrnoException).code ?? 'unreadable';
      throw new ModelUnavailableError(model, `the file ${settings.apiKeyFile} holding its API key cannot be read (${why})`);
    }
    if (key === '') throw new ModelUnavailableError(model, `the file ${settings.apiKeyFile} holding its API key is empty`);
    return key;
  }
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
