import { ConfigError } from '@ormuz/service-kit';
import { loadModelProvidersConfig } from './config.js';

describe('loadModelProvidersConfig', () => {
  it('defaults to the public APIs with their usual key variables, and no compatible server', () => {
    expect(loadModelProvidersConfig({})).toMatchObject({
      timeoutMs: 120_000,
      maxRetries: 2,
      maxToolCallsPerTurn: 16,
      stream: false,
      openai: { baseUrl: 'https://api.openai.com/v1', apiKeyEnv: 'OPENAI_API_KEY' },
      anthropic: { baseUrl: 'https://api.anthropic.com/v1', apiKeyEnv: 'ANTHROPIC_API_KEY' },
      compatible: null,
    });
  });

  it('reads a compatible server (Azure included), trimming the trailing slash', () => {
    const config = loadModelProvidersConfig({
      ORMUZ_OPENAI_COMPATIBLE_BASE_URL: 'http://127.0.0.1:11434/v1/',
      ORMUZ_OPENAI_COMPATIBLE_AZURE_API_VERSION: '2024-10-21',
      ORMUZ_OPENAI_COMPATIBLE_API_KEY_ENV: 'AZURE_OPENAI_API_KEY',
      ORMUZ_OPENAI_COMPATIBLE_TIER: 'small',
      ORMUZ_MODEL_STREAM: 'true',
    });
    expect(config.stream).toBe(true);
    expect(config.compatible).toEqual({
      baseUrl: 'http://127.0.0.1:11434/v1',
      apiKeyEnv: 'AZURE_OPENAI_API_KEY',
      azureApiVersion: '2024-10-21',
      tier: 'small',
      schemaBudgetTokens: 1200,
    });
  });

  it('refuses a URL carrying credentials, a key variable that is not a name, and bounds out of range', () => {
    expect(() => loadModelProvidersConfig({ ORMUZ_ANTHROPIC_BASE_URL: 'https://u:sk-1@api.example/v1' })).toThrow(
      ConfigError,
    );
    expect(() => loadModelProvidersConfig({ ORMUZ_OPENAI_API_KEY_ENV: 'sk-live-123' })).toThrow(
      /not an environment variable name/,
    );
    expect(() => loadModelProvidersConfig({ ORMUZ_MODEL_MAX_TOOL_CALLS_PER_TURN: '65' })).toThrow(ConfigError);
    expect(() => loadModelProvidersConfig({ ORMUZ_OPENAI_BASE_URL: 'not a url' })).toThrow(/not a URL/);
  });
});
