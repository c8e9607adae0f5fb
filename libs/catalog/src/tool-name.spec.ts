import { loadShippedCatalog } from './extensions/shipped.js';
import type { Grant } from './grants.js';
import { prepareCall } from './prepare-call.js';
import { readToolName, recordableToolName } from './tool-name.js';

const catalog = loadShippedCatalog();

describe('readToolName', () => {
  it.each([
    ['device.send_message', { name: 'device.send_message', known: true }],
    ['device.SEND_MESSAGE', { name: 'device.send_message', known: true }],
    ['Device.SendMessage', { name: 'device.send_message', known: true }],
    ['device.send-message', { name: 'device.send_message', known: true }],
    ['  device__send_message ', { name: 'device.send_message', known: true }],
    ['device.send_message@2', { name: 'device.send_message', known: true, version: 2 }],
    ['DEVICE.SEND_MESSAGE@1', { name: 'device.send_message', known: true, version: 1 }],
    ['send_message', { name: 'send_message', known: false }],
    ['device.nuke@3', { name: 'device.nuke', known: false, version: 3 }],
    ['device.send_message@0', { name: 'device.send_message@0', known: false }],
  ])('reads %j', (raw, expected) => {
    expect(readToolName(catalog, raw)).toEqual(expected);
  });

  it('leaves a hostile long name unknown without working on it', () => {
    expect(readToolName(catalog, `device.${'A'.repeat(10_000)}`).known).toBe(false);
  });
});

describe('recordableToolName', () => {
  it.each([
    ['device.nuke', 'device.nuke'],
    [' device.nuke ', 'device.nuke'],
    ['send_message', undefined],
    ['device.SEND_MESSAGE', undefined],
    ['device.send_message@2', undefined],
    ['a.b.c', undefined],
    [42, undefined],
  ])('%j → %j', (raw, expected) => {
    expect(recordableToolName(raw)).toBe(expected);
  });
});

describe('prepareCall with a loosely written name', () => {
  const grant: Grant = { tenant: 'acme', agent_id: 'helper', allow: ['device', 'ormuz'] };
  const pinnedToOne: Grant = { ...grant, pins: { 'device.delete_contacts_verified': 1 } };
  const message = { recipient: 'Alice', message_body: 'On my way' };

  it('normalises case, camelCase and a matching version to the catalog name', () => {
    for (const tool of ['device.SEND_MESSAGE', 'device.sendMessage', 'device.send_message@1']) {
      const result = prepareCall(catalog, grant, { tool, arguments: message });
      expect(result.ok && result.definition.name).toBe('device.send_message');
    }
  });

  it('suggests the closest name for a name without its extension', () => {
    const result = prepareCall(catalog, grant, { tool: 'send_message', arguments: message });
    expect(result).toMatchObject({ ok: false, reason_code: 'unknown_tool' });
    expect(!result.ok && result.message).toMatch(/Did you mean device\.send_message\?/);
    expect(!result.ok && result.tool).toBeUndefined();
  });

  it('refuses a version that does not exist, naming the one offered', () => {
    const result = prepareCall(catalog, grant, { tool: 'device.send_message@2', arguments: message });
    expect(result).toMatchObject({ ok: false, reason_code: 'version_not_offered', tool: 'device.send_message' });
    expect(!result.ok && result.message).toBe(
      'device.send_message has no version 2 (the catalog has version 1); you are offered version 1. Call it as ' +
        'device.send_message, without a version.',
    );
  });

  it('refuses a version that exists but is not the one the grant offers, never moving a pin', () => {
    const result = prepareCall(catalog, pinnedToOne, {
      tool: 'device.delete_contacts_verified@2',
      arguments: { contact_names: ['Bob'] },
    });
    expect(result).toMatchObject({ ok: false, reason_code: 'version_not_offered' });
    expect(!result.ok && result.message).toMatch(
      /^Version 2 of device\.delete_contacts_verified is not offered here; you are offered version 1\./,
    );
  });
});
