import { Catalog } from './catalog.js';
import { manifest, tool } from './catalog.fixtures.js';
import { CORE_EXTENSION } from './extensions/core.extension.js';
import { DEVICE_EXTENSION } from './extensions/device.extension.js';
import { DEFAULT_DESIGNER_CONFIG } from './extensions/shipped.js';
import {
  checkGrant,
  grantProblems,
  offeredTools,
  parseGrantRule,
  pinGrant,
  ruleMatchesCatalog,
  type Grant,
} from './grants.js';

const shipped = Catalog.load([DEVICE_EXTENSION], { core: CORE_EXTENSION, designer: DEFAULT_DESIGNER_CONFIG });
const grant = (allow: string[], deny: string[] = [], pins?: Record<string, number>): Grant => ({
  tenant: 'acme',
  agent_id: 'helper',
  allow,
  deny,
  ...(pins ? { pins } : {}),
});
const names = (catalog: Catalog, g: Grant): string[] => offeredTools(catalog, g).map((e) => `${e.name}@${e.version}`);
/** The platform's own tools, offered to every grant that does not deny them. */
const CORE = ['ormuz.activate_tool@1', 'ormuz.check_call_status@1', 'ormuz.read_more@1', 'ormuz.search_tools@1'];
/** What a grant offers beyond the platform's own tools. */
const granted = (catalog: Catalog, g: Grant): string[] => names(catalog, g).filter((n) => !n.startsWith('ormuz.'));

describe('parseGrantRule', () => {
  it('reads extension, tool and version rules', () => {
    expect(parseGrantRule('device')).toEqual({ extension: 'device' });
    expect(parseGrantRule('device.tap')).toEqual({ extension: 'device', tool: 'device.tap' });
    expect(parseGrantRule('device.tap@2')).toEqual({ extension: 'device', tool: 'device.tap', version: 2 });
  });

  it.each(['device@1', 'device.*', '*', 'Device.tap', 'device.tap@0', ''])('refuses %j', (rule) => {
    expect(() => parseGrantRule(rule)).toThrow(/is not valid/);
  });
});

describe('offeredTools', () => {
  it('offers the grant intersected with the catalog, and the platform tools', () => {
    expect(names(shipped, grant(['device.tap', 'device.send_message', 'weather.forecast']))).toEqual([
      'device.send_message@1',
      'device.tap@1',
      ...CORE,
    ]);
  });

  it('offers the platform tools without a rule, and only those, to a grant that allows nothing', () => {
    expect(names(shipped, grant([]))).toEqual(CORE);
    expect(names(shipped, grant(['weather']))).toEqual(CORE);
    expect(checkGrant(shipped, grant(['device']), 'ormuz.search_tools')).toMatchObject({ kind: 'allowed' });
    expect(checkGrant(shipped, grant([]), 'device.tap')).toMatchObject({ kind: 'not_offered' });
  });

  it('lets deny win over allow, by extension, tool or version, the platform tools included', () => {
    expect(names(shipped, grant(['device'], ['device', 'ormuz']))).toEqual([]);
    expect(granted(shipped, grant(['device.tap'], ['device.tap@1']))).toEqual([]);
    expect(names(shipped, grant(['device'], ['ormuz.read_more']))).not.toContain('ormuz.read_more@1');
    const offered = names(shipped, grant(['device', 'ormuz'], ['device.send_message', 'ormuz.read_more']));
    expect(offered).toHaveLength(12);
    expect(offered).not.toContain('device.send_message@1');
  });

  it('offers the latest shipped device.delete_contacts_verified unless the grant pins version 1', () => {
    const tool = 'device.delete_contacts_verified';
    expect(granted(shipped, grant([tool]))).toEqual([`${tool}@2`]);
    expect(granted(shipped, grant([tool], [], { [tool]: 1 }))).toEqual([`${tool}@1`]);
    expect(granted(shipped, grant([`${tool}@1`]))).toEqual([`${tool}@1`]);
    expect(pinGrant(shipped, grant(['device'])).pins).toMatchObject({ [tool]: 2, 'device.tap': 1 });
    expect(checkGrant(shipped, grant([tool], [], { [tool]: 1 }), tool)).toMatchObject({ kind: 'allowed', version: 1 });
  });

  describe('with several versions', () => {
    const catalog = Catalog.load([manifest('shop', [tool(), tool({ version: 2, risk_level: 'high' })])]);

    it('offers the highest permitted version when nothing is pinned', () => {
      expect(names(catalog, grant(['shop']))).toEqual(['shop.order_status@2']);
      expect(names(catalog, grant(['shop'], ['shop.order_status@2']))).toEqual(['shop.order_status@1']);
      expect(names(catalog, grant(['shop.order_status@1']))).toEqual(['shop.order_status@1']);
    });

    it('offers exactly the pinned version, never a newer one', () => {
      expect(names(catalog, grant(['shop'], [], { 'shop.order_status': 1 }))).toEqual(['shop.order_status@1']);
    });

    it('offers nothing rather than another version when the pinned one is gone or denied', () => {
      expect(names(catalog, grant(['shop'], [], { 'shop.order_status': 3 }))).toEqual([]);
      expect(names(catalog, grant(['shop'], ['shop.order_status@1'], { 'shop.order_status': 1 }))).toEqual([]);
    });

    it("pinGrant freezes today's versions so a later version needs a grant change", () => {
      const pinned = pinGrant(catalog, grant(['shop.order_status@1', 'shop']));
      expect(pinned.pins).toEqual({ 'shop.order_status': 2 });
      const later = Catalog.load([
        manifest('shop', [tool(), tool({ version: 2, risk_level: 'high' }), tool({ version: 3 })]),
      ]);
      expect(names(later, pinned)).toEqual(['shop.order_status@2']);
      expect(checkGrant(later, pinned, 'shop.order_status')).toMatchObject({ kind: 'allowed', version: 2 });
    });
  });

  it('offers nothing for a malformed grant, and says why', () => {
    const bad = grant(['device', 'device.*']);
    expect(offeredTools(shipped, bad)).toEqual([]);
    expect(grantProblems(bad)[0]).toMatch(/"device\.\*" is not valid/);
    expect(grantProblems({ ...grant(['device']), tenant: 'a.b' })[0]).toMatch(/tenant is not valid/);
    expect(checkGrant(shipped, bad, 'device.tap').kind).toBe('not_offered');
  });
});

describe('checkGrant', () => {
  const g = grant(['device', 'ormuz'], ['device.delete_contacts_verified']);

  it('allows an offered tool at its version', () => {
    expect(checkGrant(shipped, g, 'device.tap')).toMatchObject({ kind: 'allowed', version: 1 });
  });

  it('refuses a tool that exists but is not granted as not permitted in this conversation', () => {
    const check = checkGrant(shipped, g, 'device.delete_contacts_verified');
    expect(check.kind).toBe('not_offered');
    expect(check.kind === 'not_offered' && check.message).toMatch(
      /^device\.delete_contacts_verified is not permitted in this conversation\./,
    );
  });

  it('answers a misspelt name with the closest real name', () => {
    const check = checkGrant(shipped, g, 'device.send_mesage');
    expect(check).toMatchObject({ kind: 'unknown', suggestions: ['device.send_message'] });
    expect(check.kind === 'unknown' && check.message).toBe(
      'There is no tool named "device.send_mesage". Did you mean device.send_message? Call it by that exact name.',
    );
  });

  it('finds names by word overlap and by the tool part alone', () => {
    expect(checkGrant(shipped, g, 'device.message_send')).toMatchObject({ suggestions: ['device.send_message'] });
    expect(checkGrant(shipped, g, 'open_app')).toMatchObject({ suggestions: ['device.open_app'] });
  });

  it('never suggests a tool the grant does not offer', () => {
    const check = checkGrant(shipped, g, 'device.delete_contact_verified');
    expect(check.kind === 'unknown' && check.suggestions).not.toContain('device.delete_contacts_verified');
  });

  it('points at a matching skill', () => {
    const check = checkGrant(shipped, g, 'sms.send');
    expect(check).toMatchObject({ kind: 'unknown', skill: { keyword: 'sms', tools: ['device.send_message'] } });
    expect(check.kind === 'unknown' && check.message).toContain('For "sms", use device.send_message.');
  });

  it('says how to search the directory when nothing is close', () => {
    const check = checkGrant(shipped, g, 'weather.get_forecast');
    expect(check.kind === 'unknown' && check.message).toBe(
      'There is no tool named "weather.get_forecast". Search the tool directory with ormuz.search_tools ' +
        '(e.g. {"query": "weather get forecast"}) and activate what you find with ormuz.activate_tool.',
    );
  });

  it('does not mention the directory when the grant denies search', () => {
    const check = checkGrant(shipped, grant(['device'], ['ormuz']), 'weather.get_forecast');
    expect(check.kind === 'unknown' && check.message).toMatch(/Use only the tools you were offered\.$/);
  });
});

describe('platform tools', () => {
  it('are pinned only when a rule names them, so that they follow the platform otherwise', () => {
    expect(Object.keys(pinGrant(shipped, grant(['device.tap'])).pins ?? {})).toEqual(['device.tap']);
    expect(pinGrant(shipped, grant(['device.tap', 'ormuz'])).pins).toMatchObject({ 'ormuz.search_tools': 1 });
  });

  it('do not make a rule that names nothing match the catalog', () => {
    expect(ruleMatchesCatalog(shipped, 'weather')).toBe(false);
    expect(ruleMatchesCatalog(shipped, 'device.tap@2')).toBe(false);
    expect(ruleMatchesCatalog(shipped, 'device.tap')).toBe(true);
    expect(ruleMatchesCatalog(shipped, 'ormuz')).toBe(true);
  });
});
