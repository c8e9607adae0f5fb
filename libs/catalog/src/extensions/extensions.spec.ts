import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { checkContracts, parseContractLock } from '../contract-lock.js';
import { isWriteEffect } from '../tool-definition.js';
import { loadShippedCatalog } from './shipped.js';

const catalog = loadShippedCatalog();
const definition = (name: string) => catalog.resolve(name)!.definition;

describe('shipped extensions', () => {
  it('ship the device and core tools', () => {
    expect(catalog.toolNames()).toEqual([
      'device.delete_contacts_verified',
      'device.list_contacts',
      'device.open_app',
      'device.press_key',
      'device.screen_observe',
      'device.send_message',
      'device.swipe',
      'device.tap',
      'device.toggle_setting',
      'device.type_text',
      'ormuz.activate_tool',
      'ormuz.check_call_status',
      'ormuz.read_more',
      'ormuz.search_tools',
    ]);
  });

  it.each([
    ['device.send_message', 'high'],
    ['device.delete_contacts_verified', 'high'],
    ['device.toggle_setting', 'high'],
    ['device.tap', 'classify'],
    ['device.type_text', 'classify'],
    ['device.swipe', 'classify'],
    ['device.press_key', 'classify'],
    ['device.screen_observe', 'low'],
    ['device.list_contacts', 'low'],
    ['ormuz.search_tools', 'low'],
    ['ormuz.read_more', 'low'],
    ['ormuz.check_call_status', 'low'],
  ])('rates %s as %s risk', (name, level) => {
    expect(definition(name).risk_level).toBe(level);
  });

  it('has the platform run its own tools and the device every other one, as each manifest declares', () => {
    const executors = Object.fromEntries(catalog.entries().map((e) => [e.name, e.executor]));
    for (const [name, executor] of Object.entries(executors)) {
      expect([name, executor]).toEqual([name, name.startsWith('ormuz.') ? 'platform' : 'device']);
    }
    expect(catalog.entries().every((e) => e.definition.executor === e.executor)).toBe(true);
  });

  it('keeps device.delete_contacts_verified@1 as published and adds changed_since_listed in version 2', () => {
    const reasons = (version: number) => {
      const schema = catalog.resolve('device.delete_contacts_verified', version)!.definition.output!.schema as {
        properties: { skipped: { items: { properties: { reason: { enum: string[] } } } } };
      };
      return schema.properties.skipped.items.properties.reason.enum;
    };
    expect(catalog.versions('device.delete_contacts_verified')).toEqual([1, 2]);
    expect(reasons(1)).toEqual(['not_found', 'ambiguous']);
    expect(reasons(2)).toEqual(['not_found', 'ambiguous', 'changed_since_listed']);
    const v2 = catalog.resolve('device.delete_contacts_verified', 2)!.definition.description;
    expect(v2).toMatch(/changed_since_listed name, call device\.list_contacts again and ask the owner/);
    const v1 = catalog.resolve('device.delete_contacts_verified', 1)!.definition;
    expect(v1.description).not.toContain('changed_since_listed');
    expect({ ...v1, version: 2, description: v2, output: undefined }).toEqual({
      ...catalog.resolve('device.delete_contacts_verified', 2)!.definition,
      output: undefined,
    });
  });

  it('makes every core tool a read except activate_tool', () => {
    const writes = catalog
      .entries()
      .filter((e) => e.core && isWriteEffect(e.definition.effect))
      .map((e) => e.name);
    expect(writes).toEqual(['ormuz.activate_tool']);
  });

  it('uses the argument names the device executor reads', () => {
    expect(Object.keys(definition('device.open_app').parameters)).toEqual(['package_name']);
    expect(Object.keys(definition('device.send_message').parameters)).toEqual(['recipient', 'message_body']);
    expect(Object.keys(definition('device.list_contacts').parameters)).toEqual(['name_query', 'limit', 'continuation']);
    expect(Object.keys(definition('device.tap').parameters)).toEqual(['foreground_package', 'target_text', 'ref', 'x', 'y']);
    expect(Object.keys(definition('device.screen_observe').parameters)).toEqual(['max_elements', 'continuation']);
  });

  it('keeps designer parameters out of what the model sees', () => {
    const readMore = catalog.resolve('ormuz.read_more')!;
    expect(readMore.designerParameters).toEqual(['max_result_chars']);
    expect(Object.keys(readMore.modelSchema['properties'] as object)).toEqual(['continuation']);
  });

  it('matches the committed catalog.lock.json', () => {
    const path = fileURLToPath(new URL('../../../../catalog.lock.json', import.meta.url));
    const lock = parseContractLock(JSON.parse(readFileSync(path, 'utf8')), path);
    expect(checkContracts(catalog, lock).map((d) => d.message)).toEqual([]);
  });
});
