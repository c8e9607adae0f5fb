import { Catalog } from './catalog.js';
import { manifest, tool } from './catalog.fixtures.js';
import { checkContracts, contractHash, lockContracts, parseContractLock } from './contract-lock.js';
import type { ToolDefinition } from './tool-definition.js';

const base = tool();
const orderNumber = base.parameters['order_number']!;

describe('contractHash', () => {
  it.each<[string, ToolDefinition]>([
    [
      'a parameter schema',
      tool({ parameters: { ...base.parameters, order_number: { ...orderNumber, schema: { type: 'string' } } } }),
    ],
    [
      'a parameter becoming optional',
      tool({ parameters: { ...base.parameters, order_number: { ...orderNumber, optional: true } } }),
    ],
    ['a parameter added', tool({ parameters: { ...base.parameters, store_code: { ...orderNumber } } })],
    ['the output schema', tool({ output: { description: 'The order status.', schema: { type: 'object' } } })],
    ['the effect', tool({ effect: 'cursor_read' })],
    ['the risk level', tool({ risk_level: 'classify' })],
    ['the executor', tool({ executor: 'platform' })],
    [
      'a combination rule',
      tool({ combinations: [{ oneOf: [['include_history'], ['store_code']], message: 'Send one.' }] }),
    ],
  ])('changes when %s changes', (_what, changed) => {
    expect(contractHash(changed)).not.toBe(contractHash(base));
  });

  it('does not change when only wording changes', () => {
    const reworded = tool({
      description: 'Tells where an order is. Returns its status. Fails on unknown numbers.',
      parameters: { ...base.parameters, order_number: { ...orderNumber, description: 'The number on the receipt' } },
      output: { ...base.output!, description: 'Where the order is.' },
      timeout_ms: 9_000,
      skills: ['parcels'],
      owner_summary: 'Track order {order_number}',
    });
    expect(contractHash(reworded)).toBe(contractHash(base));
  });

  it('hashes the default executor as its absence, so hashes locked before executors were declared still hold', () => {
    const { executor: _, ...undeclared } = base;
    expect(contractHash(undeclared)).toBe(contractHash(base));
    expect(contractHash(tool({ executor: 'platform' }))).not.toBe(contractHash(undeclared));
  });

  it('does not depend on the order parameters are declared in', () => {
    const [first, second] = Object.entries(base.parameters);
    const reordered = tool({ parameters: Object.fromEntries([second!, first!]) });
    expect(contractHash(reordered)).toBe(contractHash(base));
  });
});

describe('checkContracts', () => {
  const v1 = Catalog.load([manifest('shop', [tool()])]);
  const lock = lockContracts(v1);

  it('finds nothing when the catalog matches its lock', () => {
    expect(checkContracts(v1, lock)).toEqual([]);
  });

  it('reports a contract change without a new version, saying to publish a new version', () => {
    const changed = Catalog.load([manifest('shop', [tool({ risk_level: 'high' })])]);
    const [drift, ...rest] = checkContracts(changed, lock);
    expect(rest).toEqual([]);
    expect(drift).toMatchObject({ kind: 'changed', tool: 'shop.order_status', version: 1 });
    expect(drift!.message).toContain('publish the change as version 2');
  });

  it('reports a new version the lock does not have yet', () => {
    const bumped = Catalog.load([manifest('shop', [tool(), tool({ version: 2, risk_level: 'high' })])]);
    expect(checkContracts(bumped, lock)).toMatchObject([{ kind: 'unlocked', tool: 'shop.order_status', version: 2 }]);
    expect(checkContracts(bumped, lockContracts(bumped))).toEqual([]);
  });

  it('reports a locked version that was removed', () => {
    const moved = Catalog.load([manifest('shop', [tool({ version: 2 })])]);
    expect(checkContracts(moved, lock).map((d) => [d.kind, d.version])).toEqual([
      ['unlocked', 2],
      ['removed', 1],
    ]);
  });
});

describe('lockContracts', () => {
  it('maps each tool to its versions and hashes, versions ascending', () => {
    const catalog = Catalog.load([manifest('shop', [tool({ version: 10 }), tool({ version: 9 })])]);
    const lock = lockContracts(catalog);
    expect(Object.keys(lock['shop.order_status']!)).toEqual(['9', '10']);
  });
});

describe('parseContractLock', () => {
  it.each([[[]], [{ 'shop.x': [] }], [{ 'shop.x': { v1: 'ab' } }], [{ 'shop.x': { '1': 'not-a-hash' } }]])(
    'refuses %j, telling to regenerate the lock',
    (value) => {
      expect(() => parseContractLock(value)).toThrow(/Regenerate it with `ormuz catalog lock`/);
    },
  );
});
