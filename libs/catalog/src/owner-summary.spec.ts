import fc from 'fast-check';
import { tool } from './catalog.fixtures.js';
import { loadShippedCatalog } from './extensions/shipped.js';
import { MAX_OWNER_SUMMARY_CHARS, ownerSummaryProblem, renderOwnerSummary } from './owner-summary.js';
import type { ToolDefinition } from './tool-definition.js';

const withSummary = (owner_summary: string, parameters: ToolDefinition['parameters'] = tool().parameters) =>
  tool({ owner_summary, parameters });

describe('renderOwnerSummary', () => {
  it('writes text as it is, numbers and booleans as written, lists joined and objects as JSON', () => {
    const t = withSummary('Ship {order_number} ({include_history}): {tags}; {address}; {count}');
    expect(
      renderOwnerSummary(t, {
        order_number: '123456',
        include_history: true,
        tags: ['red', 'blue', 3],
        address: { city: 'Lisbon' },
        count: 2.5,
      }),
    ).toBe('Ship 123456 (true): red, blue, 3; {"city":"Lisbon"}; 2.5');
  });

  it('reads a missing value (absent, null, empty text, empty list) as (none), or as the or: words', () => {
    const t = withSummary('A {a}, B {b}, C {c}, D {d}, E {e|or:nothing here}');
    expect(renderOwnerSummary(t, { b: null, c: '', d: [] })).toBe(
      'A (none), B (none), C (none), D (none), E nothing here',
    );
  });

  it('quotes and clips a value to 200 characters, or to the length given, with an ellipsis', () => {
    const t = withSummary('{a|quote} / {b|quote:5} / {c|quote:5} / {d|quote}');
    expect(renderOwnerSummary(t, { a: 'x'.repeat(201), b: 'hello', c: 'hello!', d: ['a', 1] })).toBe(
      `"${'x'.repeat(200)}…" / "hello" / "hello…" / "["a",1]"`,
    );
  });

  it('leaves out an optional part when a value it names is missing', () => {
    const t = withSummary('Press {key}[, which taps {target_text|quote:80}].');
    expect(renderOwnerSummary(t, { key: 'enter', target_text: 'Send' })).toBe('Press enter, which taps "Send".');
    expect(renderOwnerSummary(t, { key: 'back' })).toBe('Press back.');
    expect(renderOwnerSummary(t, { key: 'enter', target_text: '' })).toBe('Press enter.');
  });

  it('keeps doubled braces and brackets as literal text', () => {
    expect(renderOwnerSummary(withSummary('{{literal}} [[x]] {a}'), { a: 1 })).toBe('{literal} [x] 1');
  });

  it('reads only the values themselves, never inherited properties', () => {
    expect(renderOwnerSummary(withSummary('{constructor}'), {})).toBe('(none)');
  });

  it('says "Run <tool> with <arguments>" without a template, clipping the JSON to 300 characters', () => {
    expect(renderOwnerSummary(tool(), { order_number: '123456', target_text: undefined })).toBe(
      'Run shop.order_status with "{"order_number":"123456"}"',
    );
    const long = renderOwnerSummary(tool(), { note: 'y'.repeat(400) });
    expect(long).toBe(`Run shop.order_status with "${`{"note":"${'y'.repeat(400)}"}`.slice(0, 300)}…"`);
  });

  it('falls back to the default sentence for a template that does not parse or renders empty', () => {
    expect(renderOwnerSummary(withSummary('Ship {order_number'), { order_number: '1' })).toBe(
      'Run shop.order_status with "{"order_number":"1"}"',
    );
    expect(renderOwnerSummary(withSummary('[{a}]'), {})).toBe('Run shop.order_status with "{}"');
  });

  it('clips the whole sentence to what a staged call carries', () => {
    const sentence = renderOwnerSummary(withSummary('Delete {names}'), { names: Array(50).fill('n'.repeat(200)) });
    expect(sentence).toHaveLength(MAX_OWNER_SUMMARY_CHARS);
    expect(sentence.endsWith('…')).toBe(true);
  });
});

describe('ownerSummaryProblem', () => {
  it('accepts no template, and a template over parameters and resolved values', () => {
    expect(ownerSummaryProblem(tool())).toBeUndefined();
    expect(ownerSummaryProblem(withSummary('Track {order_number|quote:10}[ near {target_text}]'))).toBeUndefined();
  });

  it.each([
    ['Track {order_number', /never closed/],
    ['Track order_number}', /closes nothing/],
    ['Track [{order_number}', /never closed/],
    ['Track ]', /closes no optional part/],
    ['[a [{order_number}]]', /inside another/],
    ['Track [order]', /names no value/],
    ['Track {}', /does not start with a value name/],
    ['Track {Order}', /does not start with a value name/],
    ['Track {order_number|upper}', /"upper" is not a filter/],
    ['Track {order_number|quote|quote}', /given twice/],
    ['Track {order_number|quote:0}', /at least 1 character/],
    ['Track {order_number|quote:x}', /at least 1 character/],
    ['Track {order_number|or}', /or takes the words/],
    ['Track {order_id}', /"order_id", which is neither a parameter of the tool nor a value policy resolves/],
  ])('refuses %j', (template, problem) => {
    expect(ownerSummaryProblem(withSummary(template))).toMatch(problem);
  });
});

/** What gate.ts wrote before summaries moved into the manifests, kept to prove the templates say the same. */
function legacyOwnerSummary(name: string, args: Record<string, unknown>): string {
  const quote = (v: unknown, max = 200) => {
    const text = typeof v === 'string' ? v : JSON.stringify(v);
    return `"${text.length > max ? `${text.slice(0, max)}…` : text}"`;
  };
  switch (name) {
    case 'device.send_message':
      return `Send a text message to ${String(args.recipient)}: ${quote(args.message_body)}`;
    case 'device.delete_contacts_verified':
      return `Delete these contacts after re-checking each one: ${(args.contact_names as string[] | undefined)?.join(', ') ?? '(none)'}`;
    case 'device.toggle_setting':
      return `Turn ${String(args.desired_state)} the setting ${String(args.setting)}`;
    case 'device.tap':
      return `Tap ${args.target_text ? quote(args.target_text, 80) : 'an element'} in ${String(args.foreground_package)}`;
    case 'device.type_text':
      return `Type ${quote(args.text, 120)} in ${String(args.foreground_package)}`;
    case 'device.press_key':
      return args.key === 'enter' && args.target_text
        ? `Press enter in ${String(args.foreground_package)}, which taps ${quote(args.target_text, 80)}`
        : `Press ${String(args.key)} in ${String(args.foreground_package)}`;
    default:
      return `Run ${name} with ${quote(args, 300)}`;
  }
}

describe('the shipped templates', () => {
  const catalog = loadShippedCatalog();
  const text = fc.string({ unit: 'binary', maxLength: 260 });
  // Texts the tools' schemas require to be non-empty.
  const filled = fc.string({ unit: 'binary', minLength: 1, maxLength: 260 });
  const maybe = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: undefined });
  const packageName = fc.constantFrom('com.example.messages', 'com.bank.app');
  // The values policy hands the renderer: validated arguments plus the resolved target_text. press_key gets a
  // target_text only for enter (policy resolves the button enter activates; other keys act on no element).
  const cases: [string, fc.Arbitrary<Record<string, unknown>>][] = [
    ['device.send_message', fc.record({ recipient: filled, message_body: filled })],
    ['device.delete_contacts_verified', fc.record({ contact_names: fc.array(filled, { minLength: 1, maxLength: 5 }) })],
    [
      'device.toggle_setting',
      fc.record({ setting: fc.constantFrom('wifi', 'bluetooth'), desired_state: fc.constantFrom('on', 'off') }),
    ],
    ['device.tap', fc.record({ foreground_package: packageName, target_text: maybe(text) })],
    ['device.type_text', fc.record({ foreground_package: packageName, text: filled, target_text: maybe(text) })],
    [
      'device.press_key',
      fc.oneof(
        fc.record({ foreground_package: packageName, key: fc.constant('enter'), target_text: maybe(text) }),
        fc.record({ foreground_package: packageName, key: fc.constantFrom('back', 'home', 'recent_apps') }),
      ),
    ],
    [
      'device.swipe',
      fc.record({ foreground_package: packageName, direction: fc.constant('up'), target_text: maybe(text) }),
    ],
    ['device.open_app', fc.record({ package_name: packageName })],
  ];

  it.each(cases)('say for %s exactly what the gate said before', (name, values) => {
    const definition = catalog.resolve(name)!.definition;
    fc.assert(
      fc.property(values, (v) => {
        expect(renderOwnerSummary(definition, v)).toBe(legacyOwnerSummary(name, v));
      }),
    );
  });
});
