import { loadShippedCatalog, offeredToolsOf } from '@ormuz/catalog';
import { renderToolPayload, toolPayloadReport } from './tool-payload.command.js';

/** Policy's answer for an agent granted the device extension (the platform's own tools come with it). */
const offered = offeredToolsOf(loadShippedCatalog(), { tenant: 'acme', agent_id: 'a1', allow: ['device'] });

describe('ormuz tools payload', () => {
  it('reports both tiers in the model family, names encoded as real APIs need them', () => {
    const r = toolPayloadReport('acme', 'a1', 'openai:gpt-4o-mini', offered);
    expect(r).toMatchObject({ family: 'o200k', exact: true, encoded_names: true });
    expect(r.small.tools.map((t) => t.name)).toEqual([
      'ormuz__activate_tool',
      'ormuz__check_call_status',
      'ormuz__read_more',
      'ormuz__search_tools',
    ]);
    expect(r.small.total).toBeLessThanOrEqual(1_000);
    expect(r.large.tools).toHaveLength(offered.length);
    expect(toolPayloadReport('acme', 'a1', 'scripted:demo', offered).encoded_names).toBe(false);
  });

  it('prints every part with its tokens, and says when a count is an estimate', () => {
    const exact = renderToolPayload(toolPayloadReport('acme', 'a1', 'openai:gpt-4o-mini', offered));
    expect(exact).toMatch(/^initial tool payload of acme\/a1 on openai:gpt-4o-mini: o200k tokens\nsmall {2}total \d+/);
    expect(exact).toMatch(/\n {2}directory line +\d+\n/);
    expect(exact).toMatch(/\n {2}ormuz__search_tools +\d+ {2}core\n/);
    expect(exact).toMatch(/\nlarge {2}total \d+ {2}\(14 full schemas\)/);
    expect(exact).not.toContain('estimated');
    const estimated = renderToolPayload(toolPayloadReport('acme', 'a1', 'anthropic:claude-sonnet-4-5', offered));
    expect(estimated.split('\n')[0]).toContain('anthropic tokens (estimated: o200k times a factor');
  });
});
