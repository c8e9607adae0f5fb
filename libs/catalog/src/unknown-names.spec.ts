// Answers to unknown tool names, and edit distance, held to the implementation they replaced: the faster versions
// (worked out once per grant object, banded edit distance, pruned ranking) must answer exactly the same.
import fc from 'fast-check';
import { Catalog, type CatalogEntry } from './catalog.js';
import { manifest, tool } from './catalog.fixtures.js';
import { CORE_EXTENSION } from './extensions/core.extension.js';
import { DEVICE_EXTENSION } from './extensions/device.extension.js';
import { DEFAULT_DESIGNER_CONFIG } from './extensions/shipped.js';
import { checkGrant, offeredTools, type Grant, type GrantCheck } from './grants.js';
import { contentWords, editDistance, quote, wordOverlap } from './text.js';
import { searchTools } from './tool-search.js';
import { splitToolName } from './tool-definition.js';

// ---------------------------------------------------------------------------------------------------------------
// The reference: the code before it was made faster.

function referenceEditDistance(a: string, b: string, cap = 8): number {
  if (Math.abs(a.length - b.length) > cap) return cap + 1;
  let prevPrev: number[] = [];
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    let rowMin = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let d = Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d = Math.min(d, prevPrev[j - 2]! + 1);
      row.push(d);
      rowMin = Math.min(rowMin, d);
    }
    if (rowMin > cap) return cap + 1;
    prevPrev = prev;
    prev = row;
  }
  return Math.min(prev[b.length]!, cap + 1);
}

function referenceClosestNames(name: string, offered: readonly CatalogEntry[]): string[] {
  if (name.length > 128) return [];
  const lower = name.toLowerCase();
  const called = contentWords(name);
  const scored: { name: string; score: number }[] = [];
  for (const entry of offered) {
    const toolPart = splitToolName(entry.name)?.tool ?? entry.name;
    const cap = Math.max(2, Math.floor(Math.min(lower.length, entry.name.length) / 4));
    const distance = Math.min(
      referenceEditDistance(lower, entry.name, cap),
      referenceEditDistance(lower, toolPart, cap),
    );
    const overlap = wordOverlap(called, contentWords(entry.name));
    if (distance > cap && overlap < 0.5) continue;
    scored.push({ name: entry.name, score: (distance <= cap ? 1 - distance / (cap + 1) : 0) + overlap });
  }
  return scored
    .sort((a, b) => b.score - a.score || (a.name < b.name ? -1 : 1))
    .slice(0, 3)
    .map((s) => s.name);
}

function referenceMatchingSkill(
  name: string,
  offered: readonly CatalogEntry[],
): { keyword: string; tools: string[] } | undefined {
  if (name.length > 128) return undefined;
  const called = new Set(contentWords(name));
  for (const entry of offered) {
    for (const keyword of entry.definition.skills ?? []) {
      const needed = contentWords(keyword);
      if (needed.length === 0 || !needed.every((w) => called.has(w))) continue;
      const tools = offered
        .filter((e) => (e.definition.skills ?? []).some((k) => k.toLowerCase() === keyword.toLowerCase()))
        .map((e) => e.name);
      return { keyword, tools };
    }
  }
  return undefined;
}

/** checkGrant's answer for a name the catalog does not have, as it was computed before. */
function referenceUnknown(offered: readonly CatalogEntry[], name: unknown): GrantCheck {
  const shown = quote(String(name), 80);
  const text = typeof name === 'string' ? name : '';
  const suggestions = referenceClosestNames(text, offered);
  const skill = referenceMatchingSkill(text, offered);
  let message = `There is no tool named ${shown}.`;
  if (suggestions.length > 0) message += ` Did you mean ${suggestions.join(' or ')}? Call it by that exact name.`;
  if (skill) message += ` For ${quote(skill.keyword)}, use ${skill.tools.join(' or ')}.`;
  if (suggestions.length === 0 && !skill) {
    const canSearch = offered.some((e) => e.name === 'ormuz.search_tools');
    const query = contentWords(text.slice(0, 128)).join(' ') || 'what you want to do';
    message += canSearch
      ? ` Search the tool directory with ormuz.search_tools (e.g. {"query": ${JSON.stringify(query)}}) and activate what you find with ormuz.activate_tool.`
      : ' Use only the tools you were offered.';
  }
  return { kind: 'unknown', message, suggestions, ...(skill ? { skill } : {}) };
}

// ---------------------------------------------------------------------------------------------------------------

describe('editDistance', () => {
  const alphabet = fc.string({
    unit: fc.constantFrom('a', 'b', 'c', '_', '.', 'é', '\ud83d', '\ude00'),
    maxLength: 14,
  });

  it('matches the full-table distance for every cap', () => {
    fc.assert(
      fc.property(alphabet, alphabet, fc.integer({ min: 0, max: 16 }), (a, b, cap) => {
        expect(editDistance(a, b, cap)).toBe(referenceEditDistance(a, b, cap));
      }),
      { numRuns: 10_000 },
    );
  });

  it('matches it on names, with the default cap, with fractional and odd caps, and on long text', () => {
    const pairs: [string, string][] = [
      ['device.send_mesage', 'device.send_message'],
      ['devcie.tap', 'device.tap'],
      ['ab', 'ba'],
      ['abc', 'ca'],
      ['', 'abc'],
      ['abc', ''],
      ['x'.repeat(90), `${'x'.repeat(45)}y${'x'.repeat(44)}`],
      ['ext04.teleport_user', 'ext04.report_users'],
    ];
    for (const [a, b] of pairs) {
      for (const cap of [undefined, 0, 1, 2, 3, 7, 2.5, -1, Infinity, 100_000]) {
        expect(editDistance(a, b, cap)).toBe(referenceEditDistance(a, b, cap));
        expect(editDistance(b, a, cap)).toBe(referenceEditDistance(b, a, cap));
      }
    }
  });
});

const GROUPS = ['order', 'invoice', 'customer', 'report', 'ticket', 'contact', 'message', 'refund'];
const VERBS = ['get', 'list', 'create', 'update', 'delete', 'send', 'export', 'find', 'cancel'];
const SKILLS = ['order tracking', 'Delivery', 'delivery', 'the', 'send message', 'SMS', 'export report', 'refunds'];

/** A catalog beside the shipped one: 3 extensions of 24 generated tools, overlapping names and skills. */
function bigCatalog(): Catalog {
  const manifests = ['shop', 'crm', 'ext04'].map((ext, e) =>
    manifest(
      ext,
      Array.from({ length: 24 }, (_, i) => {
        const verb = VERBS[(i + e) % VERBS.length]!;
        const group = GROUPS[(i * 3 + e) % GROUPS.length]!;
        return tool({
          name: `${ext}.${verb}_${group}${i % 3 === 0 ? 's' : ''}${i >= 16 ? `_${i}` : ''}`,
          skills: [SKILLS[(i + e) % SKILLS.length]!, SKILLS[(i * 5 + e) % SKILLS.length]!, `${group} ${verb}`],
        });
      }).filter((t, i, all) => all.findIndex((u) => u.name === t.name) === i),
    ),
  );
  return Catalog.load([DEVICE_EXTENSION, ...manifests], { core: CORE_EXTENSION, designer: DEFAULT_DESIGNER_CONFIG });
}

describe('checkGrant on unknown names', () => {
  const catalog = bigCatalog();
  const grants: Grant[] = [
    { tenant: 'acme', agent_id: 'a', allow: ['ormuz', 'device', 'shop', 'crm', 'ext04'], deny: ['shop.get_orders'] },
    { tenant: 'acme', agent_id: 'b', allow: ['device', 'shop'], deny: ['device.send_message'] },
    { tenant: 'acme', agent_id: 'c', allow: ['crm.list_invoice', 'ormuz.search_tools'] },
    { tenant: 'acme', agent_id: 'd', allow: ['device.*'] },
  ];
  const names = catalog.toolNames();

  const mutated = fc
    .tuple(fc.constantFrom(...names), fc.nat(), fc.nat(), fc.constantFrom('drop', 'swap', 'insert', 'replace', 'upper'))
    .map(([name, a, b, how]) => {
      const at = a % name.length;
      const c = 'aeiou_.xS'[b % 9]!;
      switch (how) {
        case 'drop':
          return name.slice(0, at) + name.slice(at + 1);
        case 'swap':
          return name.slice(0, at) + (name[at + 1] ?? '') + name[at] + name.slice(at + 2);
        case 'insert':
          return name.slice(0, at) + c + name.slice(at);
        case 'replace':
          return name.slice(0, at) + c + name.slice(at + 1);
        default:
          return name.toUpperCase();
      }
    });
  const worded = fc
    .array(fc.constantFrom(...GROUPS, ...VERBS, 'sms', 'message', 'delivery', 'weather', 'the', 'tracking', 'screen'), {
      maxLength: 5,
    })
    .chain((ws) => fc.constantFrom('_', '.', ' ', '-', '__').map((sep) => ws.join(sep)));
  const name = fc.oneof(
    mutated,
    worded,
    fc.string({ maxLength: 30 }),
    fc.string({ unit: 'grapheme', maxLength: 12 }),
    fc.constantFrom('', 'x'.repeat(128), `${'a_'.repeat(64)}x`, 'y'.repeat(300), 'sendMessage', 'openApp', 'open_app'),
  );

  it('answers exactly as before, for every grant, first time and again', () => {
    const views = grants.map((g) => ({ grant: g, offered: offeredTools(catalog, g) }));
    fc.assert(
      fc.property(name, fc.constantFrom(...views), (n, { grant, offered }) => {
        if (catalog.has(n)) return;
        const expected = referenceUnknown(offered, n);
        expect(checkGrant(catalog, grant, n)).toEqual(expected);
        expect(checkGrant(catalog, grant, n)).toEqual(expected);
        expect(checkGrant(catalog, { ...grant }, n)).toEqual(expected);
      }),
      { numRuns: 1_000 },
    );
  });

  it('ranks a closer name first even when three others come before it in name order', () => {
    const close = Catalog.load([
      manifest(
        'x',
        ['abcdefgh1a', 'abcdefgh1b', 'abcdefgh1c', 'abcdefgh2', 'abcdefgh3z'].map((t) => tool({ name: `x.${t}` })),
      ),
    ]);
    const grant: Grant = { tenant: 'acme', agent_id: 'close', allow: ['x'] };
    for (const n of ['x.abcdefgh', 'abcdefgh', 'x.abcdefgh3', 'x.abcdefhg2']) {
      const expected = referenceUnknown(offeredTools(close, grant), n);
      expect(checkGrant(close, grant, n)).toEqual(expected);
    }
    expect(checkGrant(close, grant, 'x.abcdefgh')).toMatchObject({
      suggestions: ['x.abcdefgh2', 'x.abcdefgh1a', 'x.abcdefgh1b'],
    });
  });

  it('answers names that are not text, and malformed grants, as before', () => {
    const [grant] = grants;
    for (const n of [undefined, null, 42, { tool: 'x' }]) {
      expect(checkGrant(catalog, grant!, n as unknown as string)).toEqual(
        referenceUnknown(offeredTools(catalog, grant!), n),
      );
    }
    const malformed: Grant = { tenant: 'acme', agent_id: 'x', allow: ['device.*'] };
    expect(checkGrant(catalog, malformed, 'device.tapp')).toEqual(referenceUnknown([], 'device.tapp'));
    expect(checkGrant(catalog, malformed, 'device.tap').kind).toBe('not_offered');
  });

  it('keeps the most recent answers only, and answers the same after they are evicted', () => {
    const grant: Grant = { tenant: 'acme', agent_id: 'lru', allow: ['device', 'shop'] };
    const offered = offeredTools(catalog, grant);
    // 260 names: more than are kept, so the first ones are evicted before they are asked again.
    const asked = Array.from({ length: 260 }, (_, i) => `shop.get_ordr_${i}`);
    const expected = new Map(asked.map((n) => [n, referenceUnknown(offered, n)]));
    for (const n of [...asked, ...asked.slice(0, 20), ...asked.slice(-20)]) {
      expect(checkGrant(catalog, grant, n)).toEqual(expected.get(n));
    }
  });

  it('returns answers that cannot be changed by the caller', () => {
    const grant = grants[0]!;
    const check = checkGrant(catalog, grant, 'sms.send');
    expect(Object.isFrozen(check)).toBe(true);
    expect(check.kind === 'unknown' && Object.isFrozen(check.suggestions)).toBe(true);
    expect(() => (offeredTools(catalog, grant) as CatalogEntry[]).pop()).not.toThrow();
    expect(offeredTools(catalog, grant)).toHaveLength(offeredTools(catalog, { ...grant }).length);
  });

  it('offers and allows the same per grant object as with a fresh copy', () => {
    for (const grant of grants) {
      expect(offeredTools(catalog, grant)).toEqual(offeredTools(catalog, { ...grant }));
      for (const n of names) expect(checkGrant(catalog, grant, n)).toEqual(checkGrant(catalog, { ...grant }, n));
      expect(searchTools(catalog, grant, 'send order report')).toEqual(
        searchTools(catalog, { ...grant }, 'send order report'),
      );
    }
  });
});
