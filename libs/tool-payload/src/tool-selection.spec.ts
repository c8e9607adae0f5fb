import fc from 'fast-check';
import { loadShippedCatalog, offeredToolsOf } from '@ormuz/catalog';
import type { OfferedToolV1 } from '@ormuz/contracts';
import { tokenCounter } from './tokens/token-counter.js';
import { toolTokens } from './tokens/tool-tokens.js';
import { MAX_DIRECTORY_NAMES, relevanceScores, selectTools, turnTools, type SelectionInput } from './tool-selection.js';

/** Every shipped tool as policy offers it under the default grant (`ormuz`, `device`). */
const OFFERED: OfferedToolV1[] = offeredToolsOf(loadShippedCatalog(), {
  tenant: 'acme',
  agent_id: 'agent-1',
  allow: ['ormuz', 'device'],
});
const CORE = ['ormuz.activate_tool', 'ormuz.check_call_status', 'ormuz.read_more', 'ormuz.search_tools'];
const names = (tools: readonly { name: string }[]) => tools.map((t) => t.name);
const small = (o: Partial<SelectionInput> = {}): SelectionInput => ({
  offered: OFFERED,
  profile: { tier: 'small', schemaBudgetTokens: 2_000 },
  tokens: tokenCounter('o200k'),
  pinned: [],
  activated: [],
  text: '',
  ...o,
});
const selected = (input: SelectionInput) => selectTools(input).full.map(({ tool, reason }) => `${reason}:${tool.name}`);

describe('relevanceScores', () => {
  it('ranks the tool whose name says the action first', () => {
    const ranked = relevanceScores('Send Alice a text message', OFFERED);
    expect(ranked[0]?.name).toBe('device.send_message');
    expect(relevanceScores('What does the screen show?', OFFERED)[0]?.name).toBe('device.screen_observe');
    expect(relevanceScores('turn wifi off', OFFERED)[0]?.name).toBe('device.toggle_setting');
  });

  it('counts a word in the name above the same word in a description', () => {
    const tools = [
      { name: 'mail.archive', description: 'Moves one email out of the inbox; contacts are untouched.' },
      { name: 'mail.contact_lookup', description: 'Finds one person by name.' },
    ];
    const [first, second] = relevanceScores('contacts', tools);
    expect(first).toMatchObject({ name: 'mail.contact_lookup' });
    expect(first!.score).toBeGreaterThan(second!.score);
  });

  it('weighs a word every tool mentions less than a rare one', () => {
    const tools = [
      { name: 'a.one', description: 'phone battery' },
      { name: 'b.two', description: 'phone calendar' },
      { name: 'c.three', description: 'phone' },
    ];
    const ranked = relevanceScores('phone calendar', tools);
    expect(ranked.map((r) => r.name)).toEqual(['b.two', 'a.one', 'c.three']);
    expect(ranked[1]!.score).toBe(ranked[2]!.score);
  });

  it('leaves out tools that share no word, and is total on empty or hostile text', () => {
    expect(relevanceScores('zebra quantum', OFFERED)).toEqual([]);
    expect(relevanceScores('', OFFERED)).toEqual([]);
    expect(relevanceScores('the of and', OFFERED)).toEqual([]);
    expect(relevanceScores('x'.repeat(100_000), OFFERED)).toEqual([]);
    expect(relevanceScores('send', [])).toEqual([]);
  });

  it('breaks ties by name, so the same text always gives the same order', () => {
    const tools = [
      { name: 'b.note', description: 'x' },
      { name: 'a.note', description: 'x' },
    ];
    expect(relevanceScores('note', tools).map((r) => r.name)).toEqual(['a.note', 'b.note']);
  });
});

describe('selectTools', () => {
  it('gives a large model every offered tool in full and no directory', () => {
    const selection = selectTools({ ...small(), profile: { tier: 'large', schemaBudgetTokens: 0 } });
    expect(selection.full.map(({ tool }) => tool.name)).toEqual(names(OFFERED).sort());
    expect(selection.directory).toEqual([]);
  });

  it('gives a small model the core tools, the relevant ones, and lists the rest by name', () => {
    const selection = selectTools(small({ text: 'Send Alice a text message' }));
    const full = selection.full.map(({ tool }) => tool.name);
    expect(full.slice(0, 4)).toEqual(CORE);
    expect(full).toContain('device.send_message');
    expect(full.length).toBeLessThanOrEqual(4 + 3);
    expect([...full, ...selection.directory].sort()).toEqual(names(OFFERED).sort());
    expect(selection.directory).toEqual([...selection.directory].sort());
    expect(selection.directory.some((n) => full.includes(n))).toBe(false);
  });

  it('adds relevant tools only while they fit the budget, and never one that shares no word', () => {
    expect(
      selected(small({ text: 'Send Alice a text message', profile: { tier: 'small', schemaBudgetTokens: 0 } })),
    ).toEqual(CORE.map((n) => `core:${n}`));
    const send = OFFERED.find((t) => t.name === 'device.send_message')!;
    const justEnough = small({
      text: 'send message',
      profile: { tier: 'small', schemaBudgetTokens: toolTokens(tokenCounter('o200k'), send) },
    });
    expect(selected(justEnough)).toContain('relevant:device.send_message');
    expect(selected(small({ text: 'zebra quantum' }))).toEqual(CORE.map((n) => `core:${n}`));
  });

  it('always sends activated and pinned tools, beyond the budget, labelled with why', () => {
    const input = small({
      profile: { tier: 'small', schemaBudgetTokens: 0 },
      activated: ['device.tap'],
      pinned: ['device.list_contacts', 'device.tap'],
    });
    expect(selected(input)).toEqual([
      ...CORE.map((n) => `core:${n}`),
      'activated:device.tap',
      'pinned:device.list_contacts',
    ]);
  });

  it('never selects a tool the agent is not offered, whatever is pinned, activated or relevant', () => {
    const offered = OFFERED.filter((t) => t.name !== 'device.send_message' && t.name !== 'device.tap');
    const selection = selectTools(
      small({ offered, text: 'send a message', activated: ['device.tap'], pinned: ['device.send_message', 'x.y'] }),
    );
    const all = [...selection.full.map(({ tool }) => tool.name), ...selection.directory];
    expect(all).not.toContain('device.send_message');
    expect(all).not.toContain('device.tap');
    expect(all).not.toContain('x.y');
    expect(selectTools({ ...small(), offered: [] })).toEqual({ full: [], directory: [] });
  });

  it('splits exactly the offered tools between full schemas and the directory, for any input', () => {
    const name = fc.constantFrom(...names(OFFERED), 'x.unknown', 'device.nope');
    fc.assert(
      fc.property(
        fc.subarray(OFFERED),
        fc.constantFrom('small', 'large') as fc.Arbitrary<'small' | 'large'>,
        fc.nat({ max: 5_000 }),
        fc.array(name, { maxLength: 5 }),
        fc.array(name, { maxLength: 5 }),
        fc.string({ maxLength: 200 }),
        (offered, tier, budget, pinned, activated, text) => {
          const selection = selectTools({
            offered,
            profile: { tier, schemaBudgetTokens: budget },
            tokens: tokenCounter('o200k'),
            pinned,
            activated,
            text,
          });
          const full = selection.full.map(({ tool }) => tool.name);
          expect(new Set(full).size).toBe(full.length);
          expect([...full, ...selection.directory].sort()).toEqual(names(offered).sort());
          if (tier === 'large') expect(selection.directory).toEqual([]);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('caps the tools chosen for relevance alone', () => {
    const text = 'screen tap type swipe key app setting contacts message';
    const relevant = selectTools(small({ text, maxRelevant: 2, profile: { tier: 'small', schemaBudgetTokens: 1e6 } }));
    expect(relevant.full.filter((f) => f.reason === 'relevant')).toHaveLength(2);
  });
});

describe('turnTools', () => {
  it('encodes names for a provider that forbids dots and says how to reach the directory', () => {
    const selection = selectTools(small({ text: 'send a text message' }));
    const turn = turnTools(selection, { encodeToolNames: true });
    expect(turn.tools.map((t) => t.name)).toContain('ormuz__search_tools');
    expect(turn.tools.every((t) => !t.name.includes('.'))).toBe(true);
    expect(turn.directory).toContain('device__tap');
    expect(turn.instructions).toMatch(/listed by name only.*device__tap/);
    expect(turn.instructions).toMatch(/find it with ormuz__search_tools.*load it with ormuz__activate_tool/);
  });

  it('keeps canonical names otherwise, and says nothing when there is no directory', () => {
    const large = selectTools({ ...small(), profile: { tier: 'large', schemaBudgetTokens: 0 } });
    const turn = turnTools(large, { encodeToolNames: false });
    expect(turn.tools.map((t) => t.name)).toEqual(names(OFFERED).sort());
    expect(turn.instructions).toBe('');
  });

  it('does not promise a search the agent cannot run', () => {
    const offered = OFFERED.filter((t) => !t.name.startsWith('ormuz.'));
    const turn = turnTools(selectTools(small({ offered })), { encodeToolNames: false });
    expect(turn.instructions).not.toMatch(/search_tools|activate_tool/);
    expect(turn.instructions).toMatch(/schemas are not shown/);
  });

  it('lists a long directory only up to a bound and counts the rest', () => {
    const many = Array.from({ length: MAX_DIRECTORY_NAMES + 5 }, (_, i) => ({
      ...OFFERED[0]!,
      name: `bulk.tool_${String(i).padStart(3, '0')}`,
    }));
    const turn = turnTools(selectTools(small({ offered: [...OFFERED, ...many] })), { encodeToolNames: false });
    expect(turn.instructions).toMatch(/and \d+ more\./);
  });
});
