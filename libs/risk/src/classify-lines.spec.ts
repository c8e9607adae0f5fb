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
      '"targetText" is not a field (did you mean "target_text"?); the fields are tool, args, target_text, foreground_package',
    ],
    [
      { tool: 'device.tap', extra: 1 },
      '"extra" is not a field; the fields are tool, args, target_text, foreground_package',
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
    const out = JSON.parse(classifyLine(line, 1, undefined, undefined, true).output) as {
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
    expect(JSON.parse(classifyLine(line, 1, undefined, undefined, true).output).explain).toEqual({ target_text: [] });
    expect(JSON.parse(classifyLine(line, 1).output).explain).toBeUndefined();
  });
});
