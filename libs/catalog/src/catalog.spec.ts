import { Catalog } from './catalog.js';
import { manifest, tool } from './catalog.fixtures.js';
import { CatalogError, isCatalogError, type CatalogProblemRule } from './errors.js';
import type { ExtensionManifest } from './manifest.js';
import type { DesignerConfig } from './tool-definition.js';

const DESIGNED = tool({
  name: 'shop.refund_order',
  parameters: {
    order_number: {
      schema: { type: 'string' },
      description: 'Six-digit order number from the receipt',
      controller: 'model',
    },
    payout_account: {
      schema: { type: 'string', pattern: '^acct_' },
      description: 'Account refunds are paid from',
      controller: 'designer',
    },
  },
  effect: 'write',
  risk_level: 'high',
});

function loadProblems(
  manifests: readonly ExtensionManifest[],
  options: Parameters<typeof Catalog.load>[1] = {},
): CatalogError {
  try {
    Catalog.load(manifests, options);
  } catch (err) {
    if (isCatalogError(err)) return err;
    throw err;
  }
  throw new Error('expected the catalog to be refused');
}

function rules(err: CatalogError): CatalogProblemRule[] {
  return err.problems.map((p) => p.rule);
}

describe('Catalog.load', () => {
  it('loads a valid extension and resolves its tool', () => {
    const catalog = Catalog.load([manifest('shop', [tool()])]);
    expect(catalog.toolNames()).toEqual(['shop.order_status']);
    expect(catalog.resolve('shop.order_status')?.contractHash).toMatch(/^[0-9a-f]{64}$/);
  });

  it('refuses an extension claiming the reserved name ormuz', () => {
    const err = loadProblems([manifest('ormuz', [tool({ name: 'ormuz.order_status' })])]);
    expect(rules(err)).toEqual(['reserved_name']);
    expect(err.message).toMatch(/reserved for the platform's core tools/);
  });

  it('lets only the core manifest use ormuz, and only under that name', () => {
    const core = manifest('ormuz', [tool({ name: 'ormuz.order_status' })]);
    expect(Catalog.load([], { core }).has('ormuz.order_status')).toBe(true);
    expect(rules(loadProblems([], { core: manifest('platform', [tool({ name: 'platform.order_status' })]) }))).toEqual([
      'reserved_name',
    ]);
  });

  it('refuses a tool whose prefix is not its manifest name', () => {
    const err = loadProblems([manifest('shop', [tool({ name: 'store.order_status' })])]);
    expect(rules(err)).toEqual(['prefix_mismatch']);
    expect(err.message).toContain('name it "shop.order_status"');
  });

  it('refuses a non-core tool named with the ormuz prefix', () => {
    expect(rules(loadProblems([manifest('shop', [tool({ name: 'ormuz.order_status' })])]))).toEqual(['reserved_name']);
  });

  it.each(['shop.OrderStatus', 'shop.order-status', 'shop.order__status', 'shop', 'shop.order.status', 'shop._x'])(
    'refuses the tool name %s',
    (name) => {
      expect(rules(loadProblems([manifest('shop', [tool({ name })])]))).toEqual(['invalid_name']);
    },
  );

  it('refuses an extension name that is not snake_case', () => {
    expect(rules(loadProblems([manifest('My-Shop', [])]))).toEqual(['invalid_name']);
  });

  it('refuses parameter names that are not snake_case or collide with object internals', () => {
    const parameters = {
      orderNumber: { schema: { type: 'string' }, description: 'Order number from the receipt', controller: 'model' },
      constructor: { schema: { type: 'string' }, description: 'Something that clashes', controller: 'model' },
    } as const;
    expect(rules(loadProblems([manifest('shop', [tool({ parameters })])]))).toEqual(['invalid_name', 'invalid_name']);
  });

  it('refuses a duplicate name@version but keeps several versions side by side', () => {
    expect(rules(loadProblems([manifest('shop', [tool(), tool()])]))).toEqual(['duplicate_version']);
    const catalog = Catalog.load([manifest('shop', [tool({ version: 2 }), tool()])]);
    expect(catalog.versions('shop.order_status')).toEqual([1, 2]);
  });

  it('refuses an extension loaded twice', () => {
    expect(rules(loadProblems([manifest('shop', [tool()]), manifest('shop', [])]))).toEqual(['duplicate_extension']);
  });

  it('refuses a designer parameter without a configured value, naming where to set it', () => {
    const err = loadProblems([manifest('shop', [DESIGNED])]);
    expect(rules(err)).toEqual(['designer_value_missing']);
    expect(err.message).toContain('designer["shop.refund_order"]["payout_account"]');
  });

  it('refuses a configured designer value its schema rejects', () => {
    const designer: DesignerConfig = { 'shop.refund_order': { payout_account: 'savings' } };
    expect(rules(loadProblems([manifest('shop', [DESIGNED])], { designer }))).toEqual(['designer_value_invalid']);
  });

  it('refuses designer configuration for a model parameter or an unknown tool', () => {
    const designer: DesignerConfig = {
      'shop.refund_order': { payout_account: 'acct_1', order_number: '123456' },
      'shop.missing_tool': { x: 1 },
    };
    expect(rules(loadProblems([manifest('shop', [DESIGNED])], { designer }))).toEqual([
      'designer_config_unknown',
      'designer_config_unknown',
    ]);
  });

  it('refuses a designer parameter marked optional', () => {
    const parameters = {
      ...DESIGNED.parameters,
      payout_account: { ...DESIGNED.parameters['payout_account']!, optional: true },
    };
    const designer: DesignerConfig = { 'shop.refund_order': { payout_account: 'acct_1' } };
    expect(rules(loadProblems([manifest('shop', [{ ...DESIGNED, parameters }])], { designer }))).toEqual([
      'invalid_parameter',
    ]);
  });

  it('loads designer values and keeps them out of the model schema', () => {
    const designer: DesignerConfig = { 'shop.refund_order': { payout_account: 'acct_1' } };
    const entry = Catalog.load([manifest('shop', [DESIGNED])], { designer }).resolve('shop.refund_order')!;
    expect(entry.designerValues).toEqual({ payout_account: 'acct_1' });
    expect(Object.keys(entry.modelSchema['properties'] as object)).toEqual(['order_number']);
  });

  it('refuses JSON Schemas that ajv cannot compile, naming the parameter', () => {
    const parameters = {
      order_number: { schema: { type: 'strin' }, description: 'Order number from the receipt', controller: 'model' },
    } as const;
    const err = loadProblems([manifest('shop', [tool({ parameters })])]);
    expect(rules(err)).toEqual(['invalid_schema']);
    expect(err.message).toContain('parameter "order_number"');
  });

  it('refuses an output schema that ajv cannot compile', () => {
    const err = loadProblems([manifest('shop', [tool({ output: { description: 'x', schema: { minimum: 'one' } } })])]);
    expect(rules(err)).toEqual(['invalid_schema']);
  });

  it('refuses combination rules over unknown or required parameters', () => {
    const unknown = tool({ combinations: [{ oneOf: [['order_number'], ['nope']], message: 'Send one.' }] });
    expect(rules(loadProblems([manifest('shop', [unknown])]))).toEqual(['invalid_combination', 'invalid_combination']);
  });

  it('runs a tool that declares no executor on the device, and keeps platform tools to the core manifest', () => {
    const { executor: _, ...undeclared } = tool();
    const catalog = Catalog.load([manifest('shop', [undeclared])], {
      core: manifest('ormuz', [tool({ name: 'ormuz.order_status', executor: 'platform' })]),
    });
    expect(catalog.resolve('shop.order_status')!.executor).toBe('device');
    expect(catalog.resolve('ormuz.order_status')!.executor).toBe('platform');
    const err = loadProblems([manifest('shop', [tool({ executor: 'platform' })])]);
    expect(rules(err)).toEqual(['invalid_executor']);
    expect(err.message).toMatch(/only the core manifest's tools may/);
    expect(rules(loadProblems([manifest('shop', [tool({ executor: 'cloud' as never })])]))).toEqual([
      'invalid_manifest',
    ]);
  });

  it('refuses an owner summary template that does not parse or names a value the tool does not have', () => {
    const err = loadProblems([manifest('shop', [tool({ owner_summary: 'Track {order_id}' })])]);
    expect(rules(err)).toEqual(['invalid_summary']);
    expect(err.message).toContain('shop.order_status@1 owner_summary cannot be used: it names "order_id"');
    expect(rules(loadProblems([manifest('shop', [tool({ owner_summary: 'Track {order_number' })])]))).toEqual([
      'invalid_summary',
    ]);
  });

  it('refuses something that is not a manifest, saying what is wrong', () => {
    const err = loadProblems([{ apiVersion: 'v0', kind: 'Extension', metadata: { name: 'shop' } } as never]);
    expect(rules(err)).toEqual(['invalid_manifest']);
    expect(err.message).toMatch(/apiVersion/);
  });

  it('reports every problem at once', () => {
    const err = loadProblems([
      manifest('shop', [tool({ name: 'store.a' }), tool({ name: 'shop.B' })]),
      manifest('ormuz', []),
    ]);
    expect(rules(err)).toEqual(['prefix_mismatch', 'invalid_name', 'reserved_name']);
    expect(err.message).toMatch(/^The catalog has 3 problems/);
  });

  it('is not changed by later edits to the manifests it was loaded from', () => {
    const source = tool();
    const catalog = Catalog.load([manifest('shop', [source])]);
    (source.parameters['order_number']!.schema as Record<string, unknown>)['pattern'] = '.*';
    expect(catalog.resolve('shop.order_status')!.definition.parameters['order_number']!.schema['pattern']).toBe(
      '^[0-9]{6}$',
    );
    expect(Object.isFrozen(catalog.resolve('shop.order_status')!.definition.parameters)).toBe(true);
  });
});

describe('Catalog.resolve', () => {
  const catalog = Catalog.load([manifest('shop', [tool(), tool({ version: 3, risk_level: 'high' })])]);

  it('gives the latest version when nothing is pinned', () => {
    expect(catalog.resolve('shop.order_status')?.version).toBe(3);
  });

  it('gives exactly the pinned version', () => {
    expect(catalog.resolve('shop.order_status', 1)?.version).toBe(1);
  });

  it('never moves a pin to another version when the pinned one is missing', () => {
    expect(catalog.resolve('shop.order_status', 2)).toBeUndefined();
  });

  it('knows nothing of unknown names', () => {
    expect(catalog.resolve('shop.nothing')).toBeUndefined();
    expect(catalog.has('shop.nothing')).toBe(false);
  });
});
