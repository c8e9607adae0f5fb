import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { startNatsServer } from '../src/index.js';

describe('startNatsServer', () => {
  const dir = mkdtempSync(join(tmpdir(), 'ormuz-nats-conf-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('runs a server with JetStream and the included configuration on a free port, and stop() ends it', async () => {
    const users = join(dir, 'users.conf');
    writeFileSync(users, 'authorization { users: [ { user: probe, password: $PROBE_PASSWORD } ] }\n');
    const server = await startNatsServer({ include: [users], env: { PROBE_PASSWORD: 'psecret' } });
    try {
      const nc = await connect({ servers: server.url, user: 'probe', pass: 'psecret' });
      const jsm = await jetstreamManager(nc);
      await expect(jsm.getAccountInfo()).resolves.toMatchObject({ streams: 0 });
      await nc.close();
      await expect(connect({ servers: server.url, reconnect: false })).rejects.toThrow(/Authorization Violation/);
    } finally {
      await server.stop();
    }
    expect(existsSync(server.dir)).toBe(false);
    await expect(connect({ servers: server.url, reconnect: false, timeout: 1000 })).rejects.toThrow();
    await server.stop(); // a second stop is harmless
  });

  it("fails with the server's own words when the configuration cannot be used", async () => {
    const users = join(dir, 'broken.conf');
    writeFileSync(users, 'authorization { users: [ { user: probe, password: $UNSET_PASSWORD } ] }\n');
    await expect(startNatsServer({ include: [users] })).rejects.toThrow(
      /nats-server exited \(code 1\)[\s\S]*UNSET_PASSWORD/,
    );
  });
});
