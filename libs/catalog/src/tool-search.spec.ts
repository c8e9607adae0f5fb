import { Catalog } from './catalog.js';
import { CORE_EXTENSION } from './extensions/core.extension.js';
import { DEVICE_EXTENSION } from './extensions/device.extension.js';
import { DEFAULT_DESIGNER_CONFIG } from './extensions/shipped.js';
import type { Grant } from './grants.js';
import { searchTools } from './tool-search.js';

const shipped = Catalog.load([DEVICE_EXTENSION], { core: CORE_EXTENSION, designer: DEFAULT_DESIGNER_CONFIG });
const grant = (allow: string[], deny: string[] = []): Grant => ({ tenant: 'acme', agent_id: 'helper', allow, deny });

describe('searchTools', () => {
  const g = grant(['device', 'ormuz'], ['device.toggle_setting']);

  it('ranks offered tools by word overlap with name, skills and description', () => {
    const hits = searchTools(shipped, g, 'send a text message');
    expect(hits[0]).toMatchObject({ name: 'device.send_message', version: 1 });
    expect(hits[0]!.score).toBeGreaterThan(hits[1]?.score ?? 0);
  });

  it('finds tools by skill keyword', () => {
    expect(searchTools(shipped, g, 'address book')[0]?.name).toBe('device.list_contacts');
  });

  it('never returns a tool the grant does not offer', () => {
    expect(searchTools(shipped, g, 'wifi bluetooth airplane').map((h) => h.name)).not.toContain(
      'device.toggle_setting',
    );
  });

  it('returns nothing for a query without words, and at most the limit', () => {
    expect(searchTools(shipped, g, '  !! ')).toEqual([]);
    expect(searchTools(shipped, g, 'device screen contacts message', 2)).toHaveLength(2);
  });
});
