import { Catalog } from './catalog.js';
import { CORE_EXTENSION } from './extensions/core.extension.js';
import { DEVICE_EXTENSION } from './extensions/device.extension.js';
import { DEFAULT_DESIGNER_CONFIG } from './extensions/shipped.js';
import { normalizeArguments } from './normalize.js';
import { combinationProblems, outputProblems, validateArguments, type ValidationResult } from './validate.js';

const catalog = Catalog.load([DEVICE_EXTENSION], { core: CORE_EXTENSION, designer: DEFAULT_DESIGNER_CONFIG });

function validate(tool: string, args: Record<string, unknown>): ValidationResult {
  const entry = catalog.resolve(tool)!;
  const normalized = normalizeArguments(entry, args);
  if (!normalized.ok) throw new Error(normalized.message);
  return validateArguments(entry, normalized.args);
}

function message(result: ValidationResult): string {
  if (result.ok) throw new Error('expected a refusal');
  return result.message;
}

const FG = { foreground_package: 'com.example.messages' };

describe('validateArguments', () => {
  it('accepts valid arguments', () => {
    expect(validate('device.send_message', { recipient: 'Alice Martin', message_body: 'Hi' })).toEqual({ ok: true });
  });

  it('says which argument, what was wrong and what to send instead', () => {
    expect(message(validate('device.tap', { ...FG, x: '12', y: 40 }))).toBe(
      '`x` must be a number (pixels from the left edge of the screen); you sent the text "12". Send a number such as 120.',
    );
  });

  it('names a missing argument with what it holds and an example', () => {
    expect(message(validate('device.send_message', { recipient: 'Alice Martin' }))).toBe(
      '`message_body` is missing (the text of the message, 1 to 2000 characters). Send it as text, e.g. ' +
        '"message_body": "Running 10 minutes late.".',
    );
  });

  it.each<[string, Record<string, unknown>, string]>([
    ['device.press_key', { key: 'power' }, '`key` must be one of "back", "home", "enter", "recent_apps"'],
    [
      'device.list_contacts',
      { limit: 0 },
      '`limit` must be at least 1 (most contacts to return in this page, 1 to 200); you sent the number 0. Send a whole number from 1 to 200.',
    ],
    ['device.list_contacts', { limit: 2.5 }, '`limit` must be a whole number'],
    ['device.send_message', { recipient: 'Al', message_body: '' }, '`message_body` is empty'],
    [
      'device.send_message',
      { recipient: 'Al', message_body: 'x'.repeat(2001) },
      '`message_body` is 2001 characters long; the limit is 2000. Send at most 2000 characters.',
    ],
    [
      'device.open_app',
      { package_name: 'Messages' },
      '`package_name` is not in the expected form (package name of the Android app, such as com.example.messages); you sent the text "Messages".',
    ],
    ['device.delete_contacts_verified', { contact_names: [] }, '`contact_names` must list at least 1 item'],
    ['device.delete_contacts_verified', { contact_names: ['Bob', 'Bob'] }, '`contact_names` lists the same item twice'],
    [
      'device.delete_contacts_verified',
      { contact_names: ['Bob', 4] },
      '`contact_names[1]` must be text; you sent the number 4.',
    ],
  ])('%s %j is answered with an instruction', (tool, args, expected) => {
    expect(message(validate(tool, args))).toContain(expected);
  });

  it('gives one instruction per argument', () => {
    const r = validate('device.send_message', { recipient: 5, message_body: 6 });
    expect(r.ok || r.problems).toHaveLength(2);
  });
});

describe('tap combination rule', () => {
  it.each([[{ ref: 'e3' }], [{ x: 10, y: 20 }]])('accepts %j', (args) => {
    expect(validate('device.tap', { ...FG, ...args })).toEqual({ ok: true });
  });

  it.each<[Record<string, unknown>, string]>([
    [{}, 'You sent none of ref, x, y.'],
    [{ x: 10 }, 'You sent x without y.'],
    [{ ref: 'e3', x: 10, y: 20 }, 'You sent ref and x and y; choose one of the forms, not several.'],
  ])('refuses %j with the plain instruction', (args, detail) => {
    const r = validate('device.tap', { ...FG, ...args });
    expect(r).toMatchObject({ ok: false, reason_code: 'combination' });
    expect(message(r)).toBe(`Send a ref from the latest device.screen_observe, or both x and y (pixels). ${detail}`);
  });

  it('is reported by combinationProblems for a definition directly', () => {
    expect(combinationProblems(catalog.resolve('device.tap')!.definition, { ...FG, y: 3 })).toHaveLength(1);
  });
});

describe('outputProblems', () => {
  const send = catalog.resolve('device.send_message')!;

  it('accepts a result that keeps the output contract', () => {
    const result = {
      message_id: 'msg-1',
      to: { name: 'Bob Chen', number: '+14155550123' },
      sent_at: '2030-01-01T00:00:00.000Z',
    };
    expect(outputProblems(send, result)).toEqual([]);
  });

  it('reports a result that breaks it', () => {
    expect(outputProblems(send, { success: true })[0]).toMatch(/must have required property/);
  });
});
