import { ServiceMetrics } from '@ormuz/service-kit';
import { parseExposition } from '@ormuz/testing';
import { ModelLoopMetrics, providerOf } from './metrics.js';

describe('model-loop metrics', () => {
  it('labels by the provider part of the model name, never the model', () => {
    expect(providerOf('openai-compatible:qwen3-8b')).toBe('openai-compatible');
    expect(providerOf('scripted:demo')).toBe('scripted');
    expect(providerOf('gpt-4o')).toBe('unknown');
  });

  it('counts input and output tokens and failures per provider', async () => {
    const registry = new ServiceMetrics('model-loop');
    const metrics = new ModelLoopMetrics(registry);
    metrics.answered('anthropic:claude-sonnet-4', { input_tokens: 120, output_tokens: 30 }, 1.5);
    metrics.answered('anthropic:claude-opus-4', { input_tokens: 80, output_tokens: 10 }, 0.5);
    metrics.failed('openai:gpt-4.1');
    const scrape = parseExposition((await registry.exposition()).body);
    expect(scrape.value('ormuz_model_tokens_total', { provider: 'anthropic', direction: 'input' })).toBe(200);
    expect(scrape.value('ormuz_model_tokens_total', { provider: 'anthropic', direction: 'output' })).toBe(40);
    expect(scrape.value('ormuz_model_errors_total', { provider: 'openai', service: 'model-loop' })).toBe(1);
    expect(scrape.value('ormuz_model_reply_seconds_count', { provider: 'anthropic' })).toBe(2);
  });
});
