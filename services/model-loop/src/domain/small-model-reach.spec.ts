/**
 * A small model sees most of its agent's tools by name only. These tests hold the runtime to its promise that every
 * granted tool is still within two calls (search, then activate; or activate alone by the listed name), for an agent
 * granted a whole extension without any rule for the platform's own tools, and that the discovery tools reach
 * nothing beyond the grant.
 */
import { canonicalFromProviderName, loadShippedCatalog, offeredToolsOf, searchTools, type Grant } from '@ormuz/catalog';
import type { OfferedToolV1 } from '@ormuz/contracts';
import { tokenCounterFor, turnPayload } from '@ormuz/tool-payload';
import { SMALL_MODEL } from '../providers/scripted.provider.js';
import { activationResult, CoreTool, SEARCH_DEFAULT_RESULTS } from './core-tools.js';

const catalog = loadShippedCatalog();
const offeredBy = (grant: Grant): OfferedToolV1[] => offeredToolsOf(catalog, grant);

const DEVICE_ONLY: Grant = { tenant: 'acme', agent_id: 'a1', allow: ['device'] };
const offered = offeredBy(DEVICE_ONLY);
const tokens = tokenCounterFor('openai:gpt-4o-mini');
const firstTurn = (activated: readonly string[] = []) =>
  turnPayload({ offered, profile: SMALL_MODEL, tokens, activated });
const shown = (payload: ReturnType<typeof firstTurn>) =>
  payload.tools.map((t) => canonicalFromProviderName(t.name) ?? t.name);

describe('a small model granted the device extension alone', () => {
  it('is sent the discovery tools in full, and every other tool by name', () => {
    const payload = firstTurn();
    expect(shown(payload)).toEqual(expect.arrayContaining([CoreTool.SearchTools, CoreTool.ActivateTool]));
    const granted = offered.map((t) => t.name).filter((n) => !n.startsWith('ormuz.'));
    expect(granted.length).toBeGreaterThanOrEqual(9);
    for (const name of granted) {
      expect(payload.directory.map((n) => canonicalFromProviderName(n) ?? n)).toContain(name);
    }
  });

  it('reaches every granted tool in at most two calls: search by the listed name, then activate', () => {
    const payload = firstTurn();
    for (const listed of payload.directory) {
      const name = canonicalFromProviderName(listed) ?? listed;
      // Call 1: search with the words of the name the directory line shows.
      const query = listed.replace(/[._]+/g, ' ');
      const hits = searchTools(catalog, DEVICE_ONLY, query, SEARCH_DEFAULT_RESULTS).map((h) => h.name);
      expect({ name, found: hits.includes(name) }).toEqual({ name, found: true });
      // Call 2: activate the name as found; from the next turn on it is sent in full.
      const activated = activationResult(name, offered);
      expect(activated.ok).toBe(true);
      expect(shown(firstTurn([name]))).toContain(name);
    }
  });

  it('reaches every granted tool in one call by activating the listed name directly', () => {
    for (const listed of firstTurn().directory) {
      expect(activationResult(canonicalFromProviderName(listed) ?? listed, offered).ok).toBe(true);
    }
  });

  it('never widens the grant: search and activation stay within the offered tools', () => {
    const narrow: Grant = { tenant: 'acme', agent_id: 'a2', allow: ['device.tap'] };
    const narrowOffered = offeredBy(narrow);
    const hits = searchTools(catalog, narrow, 'send text message contacts screen tap', 20).map((h) => h.name);
    expect(hits.every((n) => narrowOffered.some((t) => t.name === n))).toBe(true);
    expect(hits).not.toContain('device.send_message');
    expect(activationResult('device.send_message', narrowOffered)).toMatchObject({
      ok: false,
      error: { code: 'tool_not_available' },
    });
  });
});
