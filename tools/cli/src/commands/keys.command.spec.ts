import { Command } from 'commander';
import type { ApiKeyViewV1 } from '@ormuz/contracts';
import type { CliContext } from '../context.js';
import {
  graceSeconds,
  keyLine,
  registerKeysCommands,
  renderIssuedKey,
  renderKeyList,
  renderRevokedKeys,
} from './keys.command.js';

const KEY: ApiKeyViewV1 = {
  key_id: '0123456789abcdef',
  tenant: 'acme',
  agent_id: 'a1',
  label: 'ci runner',
  via: 'issue',
  created_at: '2030-01-01T00:00:00.000Z',
  rotated_at: null,
  replaced_by: null,
  expires_at: null,
  revoked_at: null,
  state: 'active',
};
const API_KEY = `ormz_0123456789abcdef_${'a'.repeat(43)}`;

describe('ormuz keys', () => {
  it('prints a key on one line: id, state, whose, label, and how long it works', () => {
    expect(keyLine(KEY)).toBe(
      '0123456789abcdef  active   acme/a1  "ci runner"  created 2030-01-01T00:00:00.000Z  no expiry',
    );
    const rotated = {
      ...KEY,
      label: null,
      rotated_at: KEY.created_at,
      replaced_by: 'fedcba9876543210',
      expires_at: '2030-01-01T01:00:00.000Z',
    };
    expect(keyLine(rotated)).toBe(
      '0123456789abcdef  active   acme/a1  created 2030-01-01T00:00:00.000Z  ends 2030-01-01T01:00:00.000Z (replaced by fedcba9876543210)',
    );
    expect(keyLine({ ...rotated, state: 'expired' })).toContain('ended 2030-01-01T01:00:00.000Z');
    expect(keyLine({ ...KEY, state: 'revoked', revoked_at: '2030-01-02T00:00:00.000Z' })).toMatch(
      /revoked {2}acme\/a1 .* revoked 2030-01-02T00:00:00\.000Z$/,
    );
  });

  it('prints an issued key once, on a line of its own, saying it cannot be shown again', () => {
    const lines = renderIssuedKey({ key: KEY, api_key: API_KEY }).split('\n');
    expect(lines).toEqual([keyLine(KEY), expect.stringMatching(/shown this once.*cannot be shown again/), API_KEY]);
  });

  it('prints lists and revocations, saying when there is nothing', () => {
    expect(renderKeyList({ keys: [] })).toBe('no API keys');
    expect(renderKeyList({ keys: [KEY, KEY] })).toBe(`${keyLine(KEY)}\n${keyLine(KEY)}`);
    expect(renderRevokedKeys({ revoked: [] })).toBe('nothing to revoke');
    expect(renderRevokedKeys({ revoked: ['a', 'b'] })).toBe('revoked a, b');
  });

  it('reads --grace as whole seconds from 0 to a year', () => {
    expect(graceSeconds('0')).toBe(0);
    expect(graceSeconds('600')).toBe(600);
    for (const bad of ['', '-1', '1.5', 'soon', String(366 * 24 * 3600 + 1)]) {
      expect(() => graceSeconds(bad)).toThrow(/--grace must be a whole number of seconds from 0 to 31622400/);
    }
  });

  describe('commands', () => {
    const program = () => {
      const p = new Command('ormuz').exitOverride().configureOutput({ writeErr: () => undefined });
      const unreachable = (): CliContext => {
        throw new Error('the command reached policy although its input was refused');
      };
      registerKeysCommands(p, unreachable);
      return p;
    };

    it('are issue, rotate, revoke and list', () => {
      expect(program().commands[0]!.commands.map((c) => c.name())).toEqual(['issue', 'rotate', 'revoke', 'list']);
    });

    it.each([
      [['issue', '--tenant', 'acme'], /required option '--agent <id>' not specified/],
      [['issue', '--tenant', 'acme', '--agent', 'a.b'], /--agent "a\.b" is not a valid identifier/],
      [['issue', '--tenant', 'acme', '--agent', 'a', '--label', ''], /--label must be 1 to 200 characters/],
      [['rotate', '--tenant', 'acme', '--agent', 'a', '--grace', '-5'], /--grace must be a whole number/],
      [['revoke', '--tenant', 'acme', '--agent', 'a', '--key', 'k*'], /--key "k\*" is not a valid identifier/],
      [['list', '--tenant', 'a>b'], /--tenant "a>b" is not a valid identifier/],
    ])('refuses %j before calling policy', async (args, message) => {
      await expect(program().parseAsync(['keys', ...args], { from: 'user' })).rejects.toThrow(message);
    });
  });
});
