import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { demoEnvFile } from './demo.command.js';

/** What bash sees after `source`-ing the file in a shell that had other NATS credentials. */
function sourced(file: string): Record<string, string> {
  const dir = mkdtempSync(join(tmpdir(), 'ormuz-demo-env-'));
  try {
    writeFileSync(join(dir, 'demo.env'), file);
    const r = spawnSync(
      'bash',
      [
        '-c',
        'export NATS_USER=old NATS_PASSWORD=old; source "$1"; env | grep -E "^(NATS_|ORMUZ_)" | sort',
        'bash',
        join(dir, 'demo.env'),
      ],
      { encoding: 'utf8', env: { PATH: process.env.PATH ?? '' } },
    );
    if (r.status !== 0) throw new Error(r.stderr);
    return Object.fromEntries(
      r.stdout
        .trim()
        .split('\n')
        .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]),
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe("demo.env, the CLI's settings for another shell", () => {
  it("exports the demo's server, its CLI user, the namespace and the token, quoted for the shell", () => {
    const file = demoEnvFile(
      { natsUrl: 'nats://127.0.0.1:4321', natsUser: 'cli', natsPassword: "p'1$x", namespace: 'demo' },
      'a.b.c',
    );
    expect(sourced(file)).toEqual({
      NATS_URL: 'nats://127.0.0.1:4321',
      NATS_USER: 'cli',
      NATS_PASSWORD: "p'1$x",
      ORMUZ_NAMESPACE: 'demo',
      ORMUZ_TOKEN: 'a.b.c',
    });
  });

  it('unsets a NATS user the shell had when the demo connects without one', () => {
    const file = demoEnvFile(
      { natsUrl: 'nats://127.0.0.1:4222', natsUser: undefined, natsPassword: undefined, namespace: 'demo' },
      't',
    );
    expect(sourced(file)).toEqual({ NATS_URL: 'nats://127.0.0.1:4222', ORMUZ_NAMESPACE: 'demo', ORMUZ_TOKEN: 't' });
  });
});
