import fc from 'fast-check';
import { canonicalPayload } from '@ormuz/contracts';
import { loadShippedCatalog } from './extensions/shipped.js';
import type { Grant } from './grants.js';
import { prepareCall, type PrepareRefusalCode, type PreparedCall, type ToolRequest } from './prepare-call.js';
import { validateArguments } from './validate.js';

const catalog = loadShippedCatalog();
const GRANT: Grant = {
  tenant: 'acme',
  agent_id: 'helper',
  allow: ['device', 'ormuz'],
  deny: ['device.delete_contacts_verified'],
};

function refusal(result: PreparedCall): { reason_code: PrepareRefusalCode; message: string } {
  if (result.ok) throw new Error(`expected a refusal, got ${JSON.stringify(result.args)}`);
  return result;
}

describe('prepareCall', () => {
  it('prepares a valid call: normalised, designer-filled, pinned version and contract hash', () => {
    const result = prepareCall(catalog, GRANT, { tool: 'ormuz.read_more', arguments: { continuation: 'abc' } });
    expect(result).toMatchObject({
      ok: true,
      version: 1,
      contract_hash: catalog.resolve('ormuz.read_more')!.contractHash,
      args: { continuation: 'abc', max_result_chars: 4000 },
    });
  });

  it('accepts provider-encoded names and camelCase keys', () => {
    const result = prepareCall(catalog, GRANT, {
      tool: 'device__send_message',
      arguments: { recipient: 'Alice Martin', messageBody: 'On my way' },
    });
    expect(result).toMatchObject({ ok: true, args: { recipient: 'Alice Martin', message_body: 'On my way' } });
    expect(result.ok && result.definition.name).toBe('device.send_message');
  });

  it.each<[string, ToolRequest, PrepareRefusalCode, RegExp]>([
    [
      'an unknown tool',
      { tool: 'device.send_mesage', arguments: {} },
      'unknown_tool',
      /Did you mean device\.send_message\?/,
    ],
    ['a tool without a name', { tool: 42, arguments: {} }, 'unknown_tool', /no tool name/],
    [
      'a tool not granted',
      { tool: 'device.delete_contacts_verified', arguments: { contact_names: ['Bob'] } },
      'not_offered',
      /not permitted in this conversation/,
    ],
    [
      'an unknown argument',
      { tool: 'device.open_app', arguments: { app: 'x' } },
      'unknown_argument',
      /accepts: package_name/,
    ],
    [
      'a designer argument',
      { tool: 'ormuz.read_more', arguments: { continuation: 'a', max_result_chars: 99999 } },
      'designer_argument',
      /cannot be chosen in a call/,
    ],
    [
      'an invalid argument',
      { tool: 'device.tap', arguments: { foreground_package: 'com.example.messages', x: '12', y: 3 } },
      'invalid_arguments',
      /`x` must be a number/,
    ],
    ['a broken combination', { tool: 'device.tap', arguments: { foreground_package: 'com.example.messages', y: 3 } }, 'combination', /or both x and y/],
  ])('refuses %s with a reason code and an instruction', (_what, request, code, message) => {
    const r = refusal(prepareCall(catalog, GRANT, request));
    expect(r.reason_code).toBe(code);
    expect(r.message).toMatch(message);
  });

  it('refuses with a configuration fault when a per-call designer value is invalid', () => {
    const r = refusal(
      prepareCall(
        catalog,
        GRANT,
        { tool: 'ormuz.read_more', arguments: { continuation: 'a' } },
        {
          'ormuz.read_more': { max_result_chars: 'lots' },
        },
      ),
    );
    expect(r.reason_code).toBe('configuration');
  });
});

// ---- Fuzz: any request, however malformed, gives a structured result and never throws. ----

const REASONS: readonly string[] = [
  'unknown_tool',
  'not_offered',
  'invalid_arguments',
  'unknown_argument',
  'designer_argument',
  'combination',
  'configuration',
];

const toolNames = catalog.toolNames();
const parameterNames = [...new Set(catalog.entries().flatMap((e) => Object.keys(e.definition.parameters)))];
const camel = (s: string): string => s.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());

const loneSurrogate = fc
  .tuple(fc.string({ maxLength: 8 }), fc.integer({ min: 0xd800, max: 0xdfff }), fc.string({ maxLength: 8 }))
  .map(([a, s, b]) => `${a}${String.fromCharCode(s)}${b}`);

const anyKey = fc.oneof(
  fc.constantFrom(...parameterNames),
  fc.constantFrom(...parameterNames.map(camel), ...parameterNames.map((p) => p.replaceAll('_', '-'))),
  fc.constantFrom('__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', '', ' ', 'x.y'),
  fc.string({ maxLength: 12 }),
  loneSurrogate,
);

const scalar = fc.oneof(
  fc.double(),
  fc.constantFrom(NaN, Infinity, -Infinity, -0, Number.MAX_VALUE, Number.MIN_VALUE, 2 ** 53),
  fc.integer({ min: -1000, max: 5000 }),
  fc.string({ maxLength: 30 }),
  fc.string({ unit: 'binary', maxLength: 30 }),
  loneSurrogate,
  fc.constantFrom('\u0000', '\uFEFF', '\u202E', 'e1', 'com.example.messages', 'Alice Martin', 'back', 'wifi', 'on'),
  fc.boolean(),
  fc.constant(null),
  fc.constant(undefined),
);

/** An object whose keys are own properties even when they are `__proto__` (a literal would set the prototype). */
function ownObject(entries: readonly (readonly [string, unknown])[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of entries)
    Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
  return out;
}

const { value: jsonish } = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    scalar,
    fc.array(tie('value'), { maxLength: 4 }),
    fc.array(fc.tuple(anyKey, tie('value')), { maxLength: 4 }).map(ownObject),
  ),
}));

function nest(depth: number, leaf: unknown, asArray: boolean): unknown {
  let value = leaf;
  for (let i = 0; i < depth; i++) value = asArray ? [value] : { order: value };
  return value;
}

const argumentsArbitrary = fc.oneof(
  fc.array(fc.tuple(anyKey, jsonish), { maxLength: 6 }).map(ownObject),
  fc.anything({
    maxDepth: 3,
    withBigInt: true,
    withBoxedValues: true,
    withDate: true,
    withMap: true,
    withSet: true,
    withTypedArray: true,
    withSparseArray: true,
    withNullPrototype: true,
    withObjectString: true,
    withUnicodeString: true,
  }),
  fc
    .tuple(fc.constantFrom(...parameterNames), fc.nat({ max: 5000 }), jsonish, fc.boolean())
    .map(([key, depth, leaf, asArray]) => ownObject([[key, nest(depth, leaf, asArray)]])),
  fc
    .tuple(fc.constantFrom(...parameterNames), fc.constantFrom(2_001, 70_000, 1_000_001))
    .map(([key, size]) => ownObject([[key, 'é'.repeat(size)]])),
  fc.constantFrom(null, [], [1, 2], 'text', 7, true, NaN),
);

const toolArbitrary = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom(...toolNames) },
  { weight: 2, arbitrary: fc.constantFrom(...toolNames.map((n) => n.replace('.', '__'))) },
  {
    weight: 1,
    arbitrary: fc.constantFrom('device.send_mesage', 'sms.send', 'device__', 'ormuz.', '.', 'a'.repeat(10_000)),
  },
  { weight: 1, arbitrary: fc.oneof(fc.string({ maxLength: 40 }), loneSurrogate, fc.anything({ maxDepth: 1 })) },
);

/** A real tool with its own argument names, each holding its schema's example or anything at all. */
const plausibleRequest = fc.constantFrom(...toolNames).chain((tool) => {
  const entry = catalog.resolve(tool)!;
  const fields = entry.modelParameters.map((name) => {
    const example = (entry.definition.parameters[name]!.schema['examples'] as unknown[] | undefined)?.[0] ?? 1;
    return fc.option(fc.tuple(fc.constant(name), fc.oneof({ weight: 4, arbitrary: fc.constant(example) }, jsonish)), {
      nil: undefined,
    });
  });
  return fc
    .tuple(...fields)
    .map((pairs) => ({ tool, arguments: ownObject(pairs.filter((p): p is [string, unknown] => p !== undefined)) }));
});

const requestArbitrary = fc.oneof(
  { weight: 10, arbitrary: fc.record({ tool: toolArbitrary, arguments: argumentsArbitrary }) },
  { weight: 10, arbitrary: plausibleRequest },
  { weight: 1, arbitrary: fc.anything({ maxDepth: 2 }) },
);

const designerArbitrary = fc.option(
  fc.record({
    'ormuz.read_more': fc.record({ max_result_chars: fc.oneof(fc.integer(), fc.string(), fc.constant(null)) }),
  }),
  { nil: undefined },
);

describe('prepareCall under fuzzing', () => {
  it('always returns an ok result or a structured refusal, never throws', () => {
    fc.assert(
      fc.property(requestArbitrary, designerArbitrary, (request, designer) => {
        const result = prepareCall(catalog, GRANT, request as ToolRequest, designer as never);
        if (result.ok) {
          // What passes the gate is canonical JSON that validates again, with only declared keys.
          expect(() => canonicalPayload(result.args)).not.toThrow();
          expect(validateArguments(result.entry, result.args)).toEqual({ ok: true });
          for (const key of Object.keys(result.args))
            expect(Object.hasOwn(result.definition.parameters, key)).toBe(true);
        } else {
          expect(REASONS).toContain(result.reason_code);
          expect(typeof result.message).toBe('string');
          expect(result.message.length).toBeGreaterThan(0);
          expect(result.message.length).toBeLessThan(4_000);
        }
      }),
      { numRuns: 10_000 },
    );
  });
});
