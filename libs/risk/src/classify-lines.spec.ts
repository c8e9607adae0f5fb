import { classifyLine, classifyLines, parseRiskInput } from './classify-lines.js';
import { FOREGROUND_PACKAGE_FIX } from './risk-classifier.js';

const line = (value: unknown) => JSON.stringify(value);

describe('classifyLines', () => {
  describe('with a tool check', () => {
    const known = new Set(['device.tap', 'device.list_contacts']);
    const checkTool = (tool: string) =>
      known.has(tool)
        ? undefined
        : `There is no tool named "${tool}". Did you mean device.tap? Call it by that exact name.`;

    it('answers an unknown tool with unknown_tool and the closest names, never a level', () => {
      const [out] = classifyLines(
        [line({ tool: 'device.nuke', args: {}, foreground_package: 'com.example.messages' })],
        undefined,
        checkTool,
      );
      expect(JSON.parse(out as string)).toEqual({
        error: {
          code: 'unknown_tool',
          message:
            'Line 1 names a tool that does not exist, so it has no risk: There is no tool named "device.nuke". Did you mean device.tap? Call it by that exact name.',
        },
      });
    });

    it('classifies known tools as before, and reports the unknown line as not ok', () => {
      expect(
        JSON.parse(classifyLines([line({ tool: 'device.list_contacts' })], undefined, checkTool)[0] as string),
      ).toMatchObject({ level: 'low' });
      expect(classifyLine(line({ tool: 'device.nuke' }), 3, undefined, checkTool)).toMatchObject({ ok: false });
    });
  });

  it('writes one verdict line per input line, in order', () => {
    const out = classifyLines([
      line({
        tool: 'device.tap',
        args: { ref: 'e1' },
        target_text: 'Send',
        foreground_package: 'com.example.messages',
      }),
      line({
        tool: 'device.tap',
        args: { ref: 'e2' },
        target_text: 'Open',
        foreground_package: 'com.example.messages',
      }),
      line({ tool: 'device.tap', args: { ref: 'e3' }, target_text: 'Open', foreground_package: null }),
    ]).map((l) => JSON.parse(l) as unknown);
    expect(out).toEqual([
      { level: 'high', reasons: ['target text means send: "send" (English)'] },
      { level: 'low', reasons: expect.arrayContaining(['no high-risk word in the target text']) },
      {
        level: 'refused',
        reasons: [expect.stringContaining('foreground_package is missing')],
        fix: FOREGROUND_PACKAGE_FIX,
      },
    ]);
  });

  it('writes "fix" only on refusals', () => {
    const [out] = classifyLines([line({ tool: 'device.list_contacts', args: {} })]);
    expect(Object.keys(JSON.parse(out as string) as object)).toEqual(['level', 'reasons']);
  });

  it('reads args, target_text and foreground_package as optional', () => {
    expect(classifyLines([line({ tool: 'device.list_contacts' })])).toHaveLength(1);
  });

  it('answers a bad line with an error on its own line and keeps going', () => {
    const out = classifyLines(['{"tool": ', line({ tool: 'device.list_contacts', args: {} })]).map(
      (l) => JSON.parse(l) as Record<string, unknown>,
    );
    expect(out[0]).toEqual({
      error: {
        code: 'malformed_json',
        message: expect.stringMatching(/^Line 1 is not valid JSON \(.+\)\. Send one JSON object per line/),
      },
    });
    expect(out[1]).toMatchObject({ level: 'low' });
  });

  it('skips blank lines and numbers errors by physical line', () => {
    const out = classifyLines(['', '   ', '[]', '']);
    expect(out).toHaveLength(1);
    expect(JSON.parse(out[0] as string)).toEqual({
      error: {
        code: 'schema_violation',
        message: expect.stringContaining(
          'Line 3 is not a call to classify: the line must hold a JSON object, not an array',
        ),
      },
    });
  });

  it.each([
    [{ args: {} }, "tool must be the tool's name as a non-empty string"],
    [{ tool: '' }, "tool must be the tool's name as a non-empty string"],
    [{ tool: 7 }, "tool must be the tool's name as a non-empty string"],
    [{ tool: 'device.tap', args: [] }, 'args must be an object of named arguments (or left out), not an array'],
    [{ tool: 'device.tap', args: 'x' }, 'args must be an object of named arguments (or left out), not a string'],
    [
      { tool: 'device.tap', target_text: 5 },
      "target_text must be the target element's text as a string, or null, not a number",
    ],
    [
      { tool: 'device.tap', foreground_package: true },
      'foreground_package must be the package name from the latest observation as a string, or null, not a boolean',
    ],
    [
      { tool: 'device.tap', targetText: 'Send' },
      '"targetText" is not a field (did you mean "target_text"?); the fields are tool, args, target_text, foreground_package, target_role, screen_text',
    ],
    [
      { tool: 'device.tap', extra: 1 },
      '"extra" is not a field; the fields are tool, args, target_text, foreground_package, target_role, screen_text',
    ],
  ])('refuses %j as a schema violation that names the field', (value, problem) => {
    const result = classifyLine(line(value), 4);
    expect(result.ok).toBe(false);
    const parsed = JSON.parse(result.output) as { error: { code: string; message: string } };
    expect(parsed.error.code).toBe('schema_violation');
    expect(parsed.error.message).toContain(`Line 4 is not a call to classify: `);
    expect(parsed.error.message).toContain(problem);
  });

  it('refuses a __proto__ key instead of dropping it', () => {
    const result = classifyLine('{"tool":"device.tap","__proto__":{"level":"low"}}', 1);
    expect(result.ok).toBe(false);
    expect(result.output).toContain('\\"__proto__\\" is not a field');
  });
});

describe('parseRiskInput', () => {
  it('fills absent optional fields', () => {
    expect(parseRiskInput({ tool: 'device.tap' })).toEqual({
      ok: true,
      input: { tool: 'device.tap', args: {}, target_text: null, foreground_package: null },
    });
  });
});

describe('classifyLine with explain', () => {
  it('names the concept, the languages and the lexicon form of each risky word', () => {
    const line = JSON.stringify({
      tool: 'device.tap',
      args: { ref: 'e4' },
      target_text: 'Jetzt bezahlen',
      foreground_package: 'com.example.shop',
    });
    const out = JSON.parse(classifyLine(line, 1, undefined, undefined, { explain: true }).output) as {
      level: string;
      explain: { target_text: { concept: string; form: string; languages: { code: string; name: string }[] }[] };
    };
    expect(out.level).toBe('high');
    expect(out.explain.target_text).toContainEqual(
      expect.objectContaining({ concept: 'pay', form: 'bezahlen', languages: [{ code: 'de', name: 'German' }] }),
    );
  });

  it('explains nothing for a harmless label, and leaves the field out unless asked', () => {
    const line = JSON.stringify({
      tool: 'device.tap',
      args: { ref: 'e2' },
      target_text: 'Battery',
      foreground_package: 'com.example.shop',
    });
    expect(JSON.parse(classifyLine(line, 1, undefined, undefined, { explain: true }).output).explain).toEqual({
      target_text: [],
    });
    expect(JSON.parse(classifyLine(line, 1).output).explain).toBeUndefined();
  });
});

describe('classifyLine with the observed role and screen text', () => {
  const settingsTap = { tool: 'device.tap', args: { ref: 'e3' }, foreground_package: 'com.android.settings' };
  const unknownAppTap = { tool: 'device.tap', args: { ref: 'e7' }, foreground_package: 'com.example.tracker' };
  const BALANCE = ['Available balance', '€1,204.50'];
  const verdict = (value: unknown, context?: Parameters<typeof classifyLine>[4]) =>
    JSON.parse(classifyLine(line(value), 1, undefined, undefined, context).output) as {
      level: string;
      reasons: string[];
      explain?: Record<string, unknown>;
      error?: { code: string; message: string };
    };

  it('reads target_role and screen_text from the line, as policy passes them', () => {
    expect(verdict({ ...settingsTap, target_text: 'Battery' }).level).toBe('low');
    expect(verdict({ ...settingsTap, target_text: 'Battery', target_role: 'switch' })).toEqual({
      level: 'high',
      reasons: [expect.stringContaining('the target is a switch: tapping it changes a setting')],
    });
    expect(verdict({ ...unknownAppTap, target_text: 'Open' }).level).toBe('low');
    expect(verdict({ ...unknownAppTap, target_text: 'Open', screen_text: BALANCE })).toEqual({
      level: 'high',
      reasons: [expect.stringContaining('its screen shows a balance')],
    });
  });

  it('reads null as not known', () => {
    expect(parseRiskInput({ tool: 'device.tap', target_role: null, screen_text: null })).toEqual({
      ok: true,
      input: { tool: 'device.tap', args: {}, target_text: null, foreground_package: null },
    });
  });

  it.each([
    [{ target_role: 3 }, "target_role must be the target element's role from the latest observation"],
    [{ target_role: ' ' }, 'as a non-empty string of at most 64 characters (e.g. "switch", "list_item"), or null'],
    [{ screen_text: 'Balance €3' }, "screen_text must be the texts of the screen's elements as an array of strings"],
    [{ screen_text: ['Balance', 3] }, 'or null, not an array holding a non-string'],
    [{ screenText: [] }, '"screenText" is not a field (did you mean "screen_text"?)'],
  ])('refuses %j as a schema violation that names the field', (fields, problem) => {
    const out = verdict({ ...settingsTap, ...fields });
    expect(out.error?.code).toBe('schema_violation');
    expect(out.error?.message).toContain(problem);
  });

  it('gives every line the role and screen text of the command line', () => {
    const context = { targetRole: 'switch', screenText: BALANCE };
    expect(verdict({ ...settingsTap, target_text: 'Battery' }, context).level).toBe('high');
    expect(verdict({ ...unknownAppTap, target_text: 'Open' }, context)).toEqual({
      level: 'high',
      reasons: [expect.stringContaining('its screen shows a balance')],
    });
    // The same value on the line and on the command line is no conflict.
    expect(verdict({ ...settingsTap, target_text: 'Battery', target_role: 'switch' }, context).level).toBe('high');
  });

  it('refuses a line whose role or screen differs from the command line, instead of choosing one', () => {
    const out = verdict(
      { ...settingsTap, target_text: 'Battery', target_role: 'list_item', screen_text: ['Battery'] },
      { targetRole: 'switch', screenText: BALANCE },
    );
    expect(out.error).toEqual({
      code: 'schema_violation',
      message:
        'Line 1 gives a field twice: target_role is "list_item" on the line and "switch" from --role; screen_text on ' +
        'the line differs from the texts given by --screen-text or --screen-text-file. Give it on the line or on the ' +
        'command line, not both.',
    });
  });

  it('explains what the role did: the level without it, and the reasons it added', () => {
    const out = verdict({ ...settingsTap, target_text: 'Battery', target_role: 'Switch' }, { explain: true });
    expect(out.explain).toEqual({
      target_text: [],
      target_role: {
        role: 'switch',
        toggle: true,
        level_without: 'low',
        effect: 'the role makes the verdict high (low without it)',
        reasons: [expect.stringContaining('the target is a switch')],
      },
    });
  });

  it('explains what the screen text did, naming the evidence', () => {
    const out = verdict({ ...unknownAppTap, target_text: 'Open' }, { explain: true, screenText: BALANCE });
    expect(out.explain).toEqual({
      target_text: [],
      screen_text: {
        texts: 2,
        evidence: 'a balance',
        level_without: 'low',
        effect: 'the screen text makes the verdict high (low without it)',
        reasons: [expect.stringContaining('its screen shows a balance')],
      },
    });
  });

  it('says when the role or the screen changed only the reasons, or nothing', () => {
    // A high word is high anyway; the screen adds its own reason.
    const send = verdict({ ...unknownAppTap, target_text: 'Send' }, { explain: true, screenText: BALANCE });
    expect(send.explain?.screen_text).toMatchObject({
      level_without: 'high',
      effect: 'the screen text changes the reasons, not the level (high either way)',
    });
    // Outside Settings the role is not read, and a tool that does not act on the screen reads no screen.
    const outside = verdict({ ...unknownAppTap, target_text: 'Open' }, { explain: true, targetRole: 'switch' });
    expect(outside.explain?.target_role).toEqual({
      role: 'switch',
      toggle: true,
      level_without: 'low',
      effect: 'none on this call: the role is read for a tap in a Settings app, where a switch changes a setting',
      reasons: [],
    });
    const message = verdict(
      { tool: 'device.list_contacts', args: {} },
      { explain: true, screenText: ['IBAN DE89 3704 0044 0532 0130 00'] },
    );
    expect(message.explain?.screen_text).toMatchObject({
      evidence: 'an IBAN',
      effect: expect.stringMatching(/^none on this call: the screen text is read for a screen action/),
      reasons: [],
    });
  });
});
