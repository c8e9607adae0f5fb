import fc from 'fast-check';
import { Catalog } from './catalog.js';
import { manifest, tool } from './catalog.fixtures.js';
import { canonicalFromProviderName, modelSchema, modelToolSpec, providerFunctionName } from './model-schema.js';
import { SNAKE_CASE_PATTERN } from './tool-definition.js';

describe('modelSchema', () => {
  const definition = tool({
    parameters: {
      ...tool().parameters,
      store_account: { schema: { type: 'string' }, description: 'Account the shop bills', controller: 'designer' },
    },
  });

  it('shows model parameters only, requires the non-optional ones and allows nothing else', () => {
    expect(modelSchema(definition)).toEqual({
      type: 'object',
      properties: {
        order_number: {
          type: 'string',
          pattern: '^[0-9]{6}$',
          examples: ['123456'],
          description: 'Six-digit order number printed on the receipt',
        },
        include_history: { type: 'boolean', description: 'Whether to include every past status change' },
      },
      required: ['order_number'],
      additionalProperties: false,
    });
  });

  it('is what a catalog entry carries', () => {
    const designer = { 'shop.order_status': { store_account: 'acct' } };
    const entry = Catalog.load([manifest('shop', [definition])], { designer }).resolve('shop.order_status')!;
    expect(entry.modelSchema).toEqual(modelSchema(definition));
  });

  it('gives providers an encoded name on request', () => {
    expect(modelToolSpec(definition, { encodeName: true }).name).toBe('shop__order_status');
    expect(modelToolSpec(definition).name).toBe('shop.order_status');
  });
});

describe('provider function names', () => {
  const snake = fc
    .stringMatching(/^[a-z][a-z0-9]{0,6}(_[a-z0-9]{1,5}){0,3}$/)
    .filter((s) => SNAKE_CASE_PATTERN.test(s));

  it('round-trip for every <extension>.<snake_case> name', () => {
    fc.assert(
      fc.property(snake, snake, (extension, name) => {
        const canonical = `${extension}.${name}`;
        const encoded = providerFunctionName(canonical);
        expect(encoded).not.toContain('.');
        expect(canonicalFromProviderName(encoded)).toBe(canonical);
      }),
      { numRuns: 500 },
    );
  });

  it.each(['device_tap', 'a__b__c', '__tap', 'device__', 'device___tap', 'Device__tap', 'device.tap'])(
    'refuses to decode the ambiguous or foreign name %s',
    (encoded) => {
      expect(canonicalFromProviderName(encoded)).toBeUndefined();
    },
  );

  it('refuses to encode a name whose encoding would not be reversible', () => {
    expect(() => providerFunctionName('my__ext.tap')).toThrow(/reversible/);
  });
});
