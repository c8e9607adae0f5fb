import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { classifyLine } from '@ormuz/risk';
import { CliInputError } from '../context.js';
import { catalogToolCheck, classifyContext, collectText } from './risk.command.js';

describe('ormuz risk classify: the catalog check', () => {
  const checkTool = catalogToolCheck();

  it('says an unknown tool is unknown and names the closest real tools, instead of rating it low', () => {
    const result = classifyLine(JSON.stringify({ tool: 'device.nuke', args: {} }), 1, undefined, checkTool);
    expect(result.ok).toBe(false);
    const { error } = JSON.parse(result.output) as { error: { code: string; message: string } };
    expect(error.code).toBe('unknown_tool');
    expect(error.message).toMatch(
      /^Line 1 names a tool that does not exist, so it has no risk: There is no tool named "device\.nuke"\./,
    );
    expect(error.message).toMatch(/The device extension's tools are: .*device\.send_message.*device\.tap/);
    expect(error.message).not.toMatch(/level/);
  });

  it('suggests the real name for a misspelt one', () => {
    expect(checkTool('device.send_mesage')).toMatch(/The closest real names: device\.send_message/);
  });

  it('lists the extensions when the name has none that exists', () => {
    expect(checkTool('weather.nuke')).toMatch(/the extensions are: .*device/);
  });

  it('knows every shipped tool', () => {
    for (const tool of ['device.tap', 'device.send_message', 'ormuz.search_tools'])
      expect(checkTool(tool)).toBeUndefined();
  });
});

describe('ormuz risk classify: --role, --screen-text and --screen-text-file', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'ormuz-risk-classify-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('collects --screen-text in the order given', () => {
    expect(collectText('€1,204.50', collectText('Available balance', undefined))).toEqual([
      'Available balance',
      '€1,204.50',
    ]);
  });

  it('gives every line the role and the screen, and says whether to explain', () => {
    expect(classifyContext({})).toEqual({ explain: false });
    expect(classifyContext({ role: ' switch ', screenText: ['Balance', '€3.00'], explain: true })).toEqual({
      explain: true,
      targetRole: 'switch',
      screenText: ['Balance', '€3.00'],
    });
  });

  it('reads --screen-text-file as one element per line, skipping blank lines', () => {
    const file = join(dir, 'screen.txt');
    writeFileSync(file, 'Current account\r\n\r\nIBAN DE89 3704 0044 0532 0130 00\n');
    expect(classifyContext({ screenTextFile: file }).screenText).toEqual([
      'Current account',
      'IBAN DE89 3704 0044 0532 0130 00',
    ]);
  });

  it.each([
    [{ role: '  ' }, /^--role needs the element's role from the latest observation \(button, .*switch.*\)/],
    [{ role: 'x'.repeat(65) }, /at most 64 characters, e\.g\. --role switch\./],
    [{ screenText: ['a'], screenTextFile: 'screen.txt' }, /^Give the screen one way: --screen-text once per element/],
    [{ screenTextFile: '/nonexistent/screen.txt' }, /^--screen-text-file \/nonexistent\/screen\.txt cannot be read/],
  ])('refuses %j before reading any line, saying what to pass', (options, message) => {
    expect(() => classifyContext(options)).toThrow(CliInputError);
    expect(() => classifyContext(options)).toThrow(message);
  });
});
