import { O200K_FACTOR, tokenCounter, tokenCounterFor, tokenFamilyOf } from './token-counter.js';
import { TOOL_WRAPPER, toolTokens } from './tool-tokens.js';

describe('tokenFamilyOf', () => {
  it.each([
    ['openai:gpt-4o-mini', 'o200k'],
    ['openai:gpt-4.1-nano', 'o200k'],
    ['openai:gpt-5', 'o200k'],
    ['openai:o3-mini', 'o200k'],
    ['openai:o1', 'o200k'],
    ['openai:gpt-4-turbo', 'cl100k'],
    ['openai:gpt-4', 'cl100k'],
    ['openai:gpt-3.5-turbo', 'cl100k'],
    ['anthropic:claude-sonnet-4-5', 'anthropic'],
    ['openai-compatible:meta-llama/Llama-3.1-8B-Instruct', 'llama'],
    ['ollama:qwen2.5:7b', 'qwen'],
    ['vllm:mistralai/Mistral-7B-Instruct-v0.3', 'mistral'],
    ['scripted:demo', 'other'],
    ['openai:omni-moderation', 'other'],
  ])('reads %s as %s', (model, family) => {
    expect(tokenFamilyOf(model)).toBe(family);
  });
});

describe('tokenCounter', () => {
  it('counts OpenAI families exactly with their own encodings', () => {
    const o200k = tokenCounter('o200k');
    expect(o200k.exact).toBe(true);
    expect(o200k.count('')).toBe(0);
    expect(o200k.count('hello world')).toBe(2);
    // The two encodings split the same text differently; each is the model's own count.
    const text = 'Sends a text message to one recipient: 送信しました';
    expect(tokenCounter('cl100k').count(text)).not.toBe(o200k.count(text));
  });

  it('counts text that spells a special token as plain text', () => {
    expect(tokenCounter('o200k').count('<|endoftext|>')).toBeGreaterThan(1);
  });

  it('estimates the other families as o200k times their factor, rounded up, and says so', () => {
    const text = 'Searches the directory of tools this conversation is allowed to use.';
    const base = tokenCounter('o200k').count(text);
    for (const family of ['anthropic', 'llama', 'qwen', 'mistral', 'other'] as const) {
      const counter = tokenCounter(family);
      expect(counter.exact).toBe(false);
      expect(counter.count(text)).toBe(Math.ceil(base * O200K_FACTOR[family]));
    }
    expect(tokenCounterFor('anthropic:claude-opus-4-1')).toBe(tokenCounter('anthropic'));
  });

  it('counts a tool as its JSON with the family wrapper', () => {
    const tool = { name: 'shop.order_status', description: 'Reads one order.', parameters: { type: 'object' } };
    const o200k = tokenCounter('o200k');
    expect(toolTokens(o200k, tool)).toBe(o200k.count(JSON.stringify(tool)) + TOOL_WRAPPER.o200k.perTool);
  });
});
