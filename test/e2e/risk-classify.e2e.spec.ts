/**
 * `ormuz risk classify` as an operator runs it: the built CLI (`node tools/cli/bin/ormuz.js`, what `npx ormuz` runs)
 * reads JSON lines from a file and writes one verdict per line. It is local and pure, so no platform is started; the
 * calls are Settings taps and taps in an app on no list, where the observed role and the screen's text decide.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { exitWithin, killAll, ROOT, spawnTracked } from './support/processes.js';

interface Verdict {
  level?: string;
  reasons?: string[];
  explain?: Record<string, unknown>;
  error?: { code: string; message: string };
}

const SETTINGS_TAP = { tool: 'device.tap', args: { ref: 'e3' }, foreground_package: 'com.android.settings' };
const UNKNOWN_APP_TAP = { tool: 'device.tap', args: { ref: 'e7' }, foreground_package: 'com.example.tracker' };

describe('ormuz risk classify with the observed role and screen text', () => {
  const dir = mkdtempSync(join(tmpdir(), 'ormuz-risk-classify-e2e-'));
  let n = 0;

  /** Writes `calls` as JSON lines and runs the CLI on them; bounded, so a hung command fails instead of hanging. */
  async function classify(calls: readonly unknown[], ...options: string[]) {
    const file = join(dir, `calls-${++n}.jsonl`);
    writeFileSync(file, calls.map((c) => `${JSON.stringify(c)}\n`).join(''));
    const t = spawnTracked(process.execPath, [
      join(ROOT, 'tools/cli/bin/ormuz.js'),
      'risk',
      'classify',
      '--file',
      file,
      ...options,
    ]);
    const { code } = await exitWithin(t, 20_000, `ormuz risk classify ${options.join(' ')}`);
    const lines = t
      .stdout()
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => JSON.parse(l) as Verdict);
    return { code, lines, stderr: t.stderr() };
  }

  afterAll(async () => {
    await killAll();
    rmSync(dir, { recursive: true, force: true });
  });

  it('judges a Settings tap by the role given with --role', async () => {
    const battery = { ...SETTINGS_TAP, target_text: 'Battery' };
    expect((await classify([battery])).lines).toEqual([expect.objectContaining({ level: 'low' })]);
    const asSwitch = await classify([battery], '--role', 'switch');
    expect(asSwitch.code).toBe(0);
    expect(asSwitch.lines).toEqual([
      {
        level: 'high',
        reasons: [
          'foreground app "com.android.settings" is Settings, and the target is a switch: tapping it changes a setting',
        ],
      },
    ]);
    expect((await classify([battery], '--role', 'list_item')).lines).toEqual([
      expect.objectContaining({ level: 'low' }),
    ]);
  });

  it('treats an app on no list as a finance app when --screen-text shows a balance', async () => {
    const open = { ...UNKNOWN_APP_TAP, target_text: 'Open' };
    expect((await classify([open])).lines).toEqual([expect.objectContaining({ level: 'low' })]);
    const r = await classify([open], '--screen-text', 'Available balance', '--screen-text', '€1,204.50');
    expect(r.code).toBe(0);
    expect(r.lines).toEqual([
      {
        level: 'high',
        reasons: [
          'foreground app "com.example.tracker" is treated as a payment, banking, wallet or exchange app: its screen shows a balance',
        ],
      },
    ]);
  });

  it('reads the screen from --screen-text-file, one element per line, for every line', async () => {
    const screen = join(dir, 'screen.txt');
    writeFileSync(screen, 'Current account\nIBAN DE89 3704 0044 0532 0130 00\nMove money\n');
    const r = await classify(
      [
        { ...UNKNOWN_APP_TAP, target_text: 'Open' },
        { ...UNKNOWN_APP_TAP, target_text: 'Details' },
      ],
      '--screen-text-file',
      screen,
    );
    expect(r.code).toBe(0);
    expect(r.lines).toEqual([
      expect.objectContaining({ level: 'high', reasons: [expect.stringContaining('its screen shows an IBAN')] }),
      expect.objectContaining({ level: 'high', reasons: [expect.stringContaining('its screen shows an IBAN')] }),
    ]);
    // The reason names the evidence, never the number.
    expect(JSON.stringify(r.lines)).not.toContain('3704');
  });

  it('shows with --explain what the role and the screen text changed', async () => {
    const r = await classify(
      [
        { ...SETTINGS_TAP, target_text: 'Battery' },
        { ...UNKNOWN_APP_TAP, target_text: 'Open' },
      ],
      '--explain',
      '--role',
      'switch',
      '--screen-text',
      'Balance',
      '--screen-text',
      '$310.25',
    );
    expect(r.code).toBe(0);
    expect(r.lines[0]?.explain).toMatchObject({
      target_role: { role: 'switch', toggle: true, level_without: 'low' },
      screen_text: { texts: 2, evidence: 'a balance', level_without: 'high' },
    });
    expect(r.lines[0]?.explain?.target_role).toMatchObject({
      effect: 'the role makes the verdict high (low without it)',
    });
    // In Settings the screen text is not what decides: Settings is judged as Settings.
    expect(r.lines[0]?.explain?.screen_text).toMatchObject({ reasons: [] });
    expect(r.lines[1]?.explain).toMatchObject({
      target_role: { level_without: 'high', reasons: [] },
      screen_text: { level_without: 'low', effect: 'the screen text makes the verdict high (low without it)' },
    });
  });

  it('reads target_role and screen_text on the line, and refuses a line that says otherwise than the options', async () => {
    const r = await classify(
      [
        { ...SETTINGS_TAP, target_text: 'Battery', target_role: 'switch' },
        { ...SETTINGS_TAP, target_text: 'Battery', target_role: 'list_item' },
      ],
      '--role',
      'switch',
    );
    expect(r.code).toBe(1);
    expect(r.lines[0]).toMatchObject({ level: 'high' });
    expect(r.lines[1]).toEqual({
      error: {
        code: 'schema_violation',
        message:
          'Line 2 gives a field twice: target_role is "list_item" on the line and "switch" from --role. Give it on the ' +
          'line or on the command line, not both.',
      },
    });
  });

  it.each([
    [['--role', ''], /--role needs the element's role from the latest observation/],
    [['--screen-text', 'Balance', '--screen-text-file', 'screen.txt'], /Give the screen one way/],
    [['--screen-text-file', '/nonexistent/screen.txt'], /--screen-text-file \/nonexistent\/screen\.txt cannot be read/],
  ])('refuses %j before reading a line, saying what to pass', async (options, message) => {
    const r = await classify([{ ...SETTINGS_TAP, target_text: 'Battery' }], ...options);
    expect(r.code).toBe(1);
    expect(r.lines).toEqual([]);
    expect(r.stderr).toMatch(message);
  });
});
