import { ConfigError } from '@ormuz/service-kit';
import { loadModelLoopConfig, loadModelProvidersConfig } from './config.js';
import { priceOf } from './providers/common/prices.js';

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

describe('cost bound and price table', () => {
  it('has no cost bound by default, and prices the scripted models at nothing and known models at list price', () => {
    const config = loadModelLoopConfig({});
    expect(config.limits.maxCostUsd).toBeNull();
    expect(priceOf(config.prices, 'scripted:demo')).toEqual({ input_usd_per_mtok: 0, output_usd_per_mtok: 0 });
    expect(priceOf(config.prices, 'openai:gpt-4o-mini')).toEqual({
      input_usd_per_mtok: 0.15,
      output_usd_per_mtok: 0.6,
    });
    expect(priceOf(config.prices, 'openai-compatible:llama3')).toBeNull();
  });

  it('reads the bound in dollars and merges MODEL_LOOP_MODEL_PRICES over the defaults, a provider wildcard included', () => {
    const config = loadModelLoopConfig({
      MODEL_LOOP_MAX_COST_USD: '0.50',
      MODEL_LOOP_MODEL_PRICES: JSON.stringify({
        'openai:gpt-4o': { input: 2, output: 8 },
        'openai-compatible:*': { input: 0, output: 0 },
      }),
    });
    expect(config.limits.maxCostUsd).toBe(0.5);
    expect(priceOf(config.prices, 'openai:gpt-4o')).toEqual({ input_usd_per_mtok: 2, output_usd_per_mtok: 8 });
    expect(priceOf(config.prices, 'openai-compatible:llama3')).toEqual({
      input_usd_per_mtok: 0,
      output_usd_per_mtok: 0,
    });
    expect(priceOf(config.prices, 'openai:gpt-4o-mini')).toEqual({
      input_usd_per_mtok: 0.15,
      output_usd_per_mtok: 0.6,
    });
  });

  it("reads every tenant's default daily limits, none when unset, and refuses one that is not a count or an amount", () => {
    expect(loadModelLoopConfig({}).tenantDayLimits).toEqual({});
    expect(
      loadModelLoopConfig({
        MODEL_LOOP_TENANT_DAY_STEPS: '500',
        MODEL_LOOP_TENANT_DAY_TOOL_CALLS: '0',
        MODEL_LOOP_TENANT_DAY_TOKENS: '2000000',
        MODEL_LOOP_TENANT_DAY_COST_USD: '25.50',
      }).tenantDayLimits,
    ).toEqual({ day_steps: 500, day_tool_calls: 0, day_tokens: 2_000_000, day_cost_usd: 25.5 });
    expect(() => loadModelLoopConfig({ MODEL_LOOP_TENANT_DAY_TOKENS: '1.5' })).toThrow(
      /MODEL_LOOP_TENANT_DAY_TOKENS=1.5 is not an integer/,
    );
    expect(() => loadModelLoopConfig({ MODEL_LOOP_TENANT_DAY_COST_USD: 'lots' })).toThrow(
      /not an amount of US dollars/,
    );
  });

  it('refuses a bound that is not an amount and a price table it cannot read, saying how to write it', () => {
    expect(() => loadModelLoopConfig({ MODEL_LOOP_MAX_COST_USD: '-1' })).toThrow(/not an amount of US dollars/);
    expect(() => loadModelLoopConfig({ MODEL_LOOP_MAX_COST_USD: '$2' })).toThrow(ConfigError);
    expect(() => loadModelLoopConfig({ MODEL_LOOP_MODEL_PRICES: '{not json' })).toThrow(/not JSON.*per 1M input/);
    expect(() => loadModelLoopConfig({ MODEL_LOOP_MODEL_PRICES: '{"gpt-4o": {"input": 1, "output": 2}}' })).toThrow(
      /"gpt-4o" is not a model name/,
    );
    expect(() => loadModelLoopConfig({ MODEL_LOOP_MODEL_PRICES: '{"openai:x": {"input": -1, "output": 2}}' })).toThrow(
      /entry of "openai:x"/,
    );
    expect(() => loadModelLoopConfig({ MODEL_LOOP_MODEL_PRICES: '{"openai:x": {"input": 1}}' })).toThrow(
      /entry of "openai:x"/,
    );
  });
});
