import { Catalog } from './catalog.js';
import { manifest, tool } from './catalog.fixtures.js';
import { normalizeArguments, type NormalizeResult } from './normalize.js';
import { toSnakeCase } from './text.js';

const catalog = Catalog.load(
  [
    manifest('shop', [
      tool({
        parameters: {
          ...tool().parameters,
          store_account: { schema: { type: 'string' }, description: 'Account the shop bills', controller: 'designer' },
        },
      }),
    ]),
  ],
  { designer: { 'shop.order_status': { store_account: 'acct_main' } } },
);
const entry = catalog.resolve('shop.order_status')!;

function refused(result: NormalizeResult): { reason_code: string; message: string } {
  if (result.ok) throw new Error(`expected a refusal, got ${JSON.stringify(result.args)}`);
  return result;
}

describe('toSnakeCase', () => {
  it.each([
    ['orderNumber', 'order_number'],
    ['OrderNumber', 'order_number'],
    ['order-number', 'order_number'],
    ['includeHTTPHistory', 'include_http_history'],
    ['order_number', 'order_number'],
  ])('maps %s to %s', (key, snake) => {
    expect(toSnakeCase(key)).toBe(snake);
  });
});

describe('normalizeArguments', () => {
  it('maps camelCase and kebab-case keys to the schema names and fills designer values', () => {
    expect(normalizeArguments(entry, { orderNumber: '123456', 'include-history': true })).toEqual({
      ok: true,
      args: { order_number: '123456', include_history: true, store_account: 'acct_main' },
    });
  });

  it('treats missing arguments as an empty object', () => {
    expect(normalizeArguments(entry, undefined)).toEqual({ ok: true, args: { store_account: 'acct_main' } });
  });

  it('refuses a key that matches nothing, naming the allowed keys', () => {
    const r = refused(normalizeArguments(entry, { order_number: '123456', orderId: 'x' }));
    expect(r.reason_code).toBe('unknown_argument');
    expect(r.message).toBe(
      '"orderId" is not an argument of shop.order_status; remove it or use one of its arguments. ' +
        'shop.order_status accepts: order_number, include_history.',
    );
  });

  it('refuses a designer-controlled key sent by the model, in any spelling', () => {
    for (const key of ['store_account', 'storeAccount', 'store-account']) {
      const r = refused(normalizeArguments(entry, { order_number: '123456', [key]: 'acct_evil' }));
      expect(r.reason_code).toBe('designer_argument');
      expect(r.message).toContain('`store_account` is set by this tool');
      expect(r.message).not.toContain('accepts: order_number, include_history, store_account');
    }
  });

  it.each(['{"__proto__": {"admin": true}, "order_number": "123456"}', '{"constructor": 1}', '{"prototype": 1}'])(
    'refuses the prototype key in %s',
    (json) => {
      const r = refused(normalizeArguments(entry, JSON.parse(json)));
      expect(r.reason_code).toBe('unknown_argument');
      expect(r.message).toMatch(/is never an argument name; remove it/);
    },
  );

  it('refuses prototype keys nested inside a value', () => {
    const r = refused(normalizeArguments(entry, JSON.parse('{"order_number": {"__proto__": {"x": 1}}}')));
    expect(r.reason_code).toBe('invalid_arguments');
    expect(r.message).toContain('"__proto__"');
  });

  it('never lets an inherited property stand in for an argument', () => {
    const inherited = Object.create({ order_number: '123456' }) as object;
    expect(refused(normalizeArguments(entry, inherited)).reason_code).toBe('invalid_arguments');
  });

  it('refuses one argument sent in two spellings', () => {
    const r = refused(normalizeArguments(entry, { orderNumber: '1', order_number: '2' }));
    expect(r.reason_code).toBe('invalid_arguments');
    expect(r.message).toContain('`order_number` was sent twice');
  });

  it.each<[string, unknown, RegExp]>([
    ['a list', [1, 2], /must be a JSON object of named arguments; you sent a list of 2 items/],
    ['text', 'order 123456', /you sent the text "order 123456"/],
    ['null', null, /you sent null/],
    ['NaN', { order_number: NaN }, /`order_number` is NaN/],
    ['Infinity', { order_number: [Infinity] }, /`order_number\[0\]` is Infinity/],
    ['a lone surrogate', { order_number: 'ab\uD83D' }, /broken character/],
    ['a date', { order_number: new Date(0) }, /not a plain JSON object/],
    ['a function', { order_number: () => 1 }, /is a function/],
    ['a bigint', { order_number: 1n }, /is a bigint/],
    [
      'an empty slot',
      { order_number: Object.assign(new Array(3), { 0: 1, 2: 3 }) },
      /`order_number\[1\]` is an empty slot/,
    ],
  ])('refuses %s as invalid arguments', (_what, args, message) => {
    const r = refused(normalizeArguments(entry, args));
    expect(r.reason_code).toBe('invalid_arguments');
    expect(r.message).toMatch(message);
  });

  it('refuses values nested too deeply', () => {
    let deep: unknown = 'bottom';
    for (let i = 0; i < 10_000; i++) deep = [deep];
    expect(refused(normalizeArguments(entry, { order_number: deep })).message).toMatch(/nested deeper than 32 levels/);
  });

  it('refuses arguments with too much text', () => {
    const r = refused(normalizeArguments(entry, { order_number: 'x'.repeat(1_000_001) }));
    expect(r.message).toMatch(/over 1000000 characters of text/);
  });

  it('takes a per-call designer value over the catalog one, and refuses an invalid one as a configuration fault', () => {
    const designer = { 'shop.order_status': { store_account: 'acct_tenant' } };
    expect(normalizeArguments(entry, { order_number: '123456' }, designer)).toMatchObject({
      ok: true,
      args: { store_account: 'acct_tenant' },
    });
    const r = refused(
      normalizeArguments(entry, { order_number: '123456' }, { 'shop.order_status': { store_account: 7 } }),
    );
    expect(r.reason_code).toBe('configuration');
    expect(r.message).toMatch(/Do not retry/);
  });

  it('returns a fresh copy, not the caller objects', () => {
    const list = ['a'];
    const r = normalizeArguments(entry, { order_number: list });
    expect(r.ok && r.args['order_number']).toEqual(['a']);
    expect(r.ok && r.args['order_number']).not.toBe(list);
  });
});
