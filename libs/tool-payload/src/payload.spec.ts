import { loadShippedCatalog, offeredToolsOf, type Grant } from '@ormuz/catalog';
import type { OfferedToolV1 } from '@ormuz/contracts';
import { initialPayloads, payloadTokens, turnPayload } from './payload.js';
import { LOOP_INSTRUCTIONS } from './instructions.js';
import { tokenCounter } from './tokens/token-counter.js';

const catalog = loadShippedCatalog();
const offeredBy = (grant: Grant): OfferedToolV1[] => offeredToolsOf(catalog, grant);
/** The whole device extension, without a rule for the platform's own tools (they come with every grant). */
const DEVICE = offeredBy({ tenant: 'acme', agent_id: 'a1', allow: ['device'] });

describe('initialPayloads', () => {
  it('keeps the small tier of the whole device extension within 1,000 o200k tokens, discovery tools included', () => {
    for (const encodeToolNames of [false, true]) {
      const { small } = initialPayloads(DEVICE, 'openai:gpt-4o-mini', { encodeToolNames });
      expect(small.family).toBe('o200k');
      expect(small.tools.map((t) => t.reason)).toEqual(['core', 'core', 'core', 'core']);
      expect(small.directory).toBeGreaterThan(0);
      expect(small.total).toBeLessThanOrEqual(1_000);
    }
  });

  it('sends a large model every schema and no directory line', () => {
    const { small, large } = initialPayloads(DEVICE, 'openai:gpt-4o-mini');
    expect(large.tools.map((t) => t.name).sort()).toEqual(DEVICE.map((t) => t.name).sort());
    expect(large.directory).toBe(0);
    expect(large.total).toBeGreaterThan(small.total);
  });

  it('adds the parts up to the total', () => {
    const { small } = initialPayloads(DEVICE, 'anthropic:claude-sonnet-4-5');
    const parts =
      small.instructions + small.directory + small.toolsWrapper + small.tools.reduce((s, t) => s + t.tokens, 0);
    expect(small.total).toBe(parts);
    expect(small.exact).toBe(false);
  });
});

describe('turnPayload', () => {
  it('sends the standing instructions, then the directory line naming every withheld tool', () => {
    const tokens = tokenCounter('o200k');
    const payload = turnPayload({
      offered: DEVICE,
      profile: { tier: 'small', schemaBudgetTokens: 0, encodeToolNames: false },
      tokens,
    });
    expect(payload.system.startsWith(LOOP_INSTRUCTIONS)).toBe(true);
    expect(payload.system.endsWith(payload.directoryLine)).toBe(true);
    for (const name of payload.directory) expect(payload.directoryLine).toContain(name);
    expect(payloadTokens(payload, tokens).instructions).toBe(tokens.count(LOOP_INSTRUCTIONS));
  });
});
