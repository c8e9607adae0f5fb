import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { NatsStoreInUseError, startNatsServer } from '../src/index.js';

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

  it("starts when a user's password variable is not given, and nobody can connect as that user", async () => {
    const users = join(dir, 'two-users.conf');
    writeFileSync(
      users,
      'authorization { users: [ { user: probe, password: $PROBE_PASSWORD }, { user: other, password: $NATS_OTHER_PASSWORD } ] }\n',
    );
    const server = await startNatsServer({ include: [users], env: { PROBE_PASSWORD: 'psecret' } });
    try {
      const nc = await connect({ servers: server.url, user: 'probe', pass: 'psecret' });
      await nc.close();
      await expect(connect({ servers: server.url, user: 'other', pass: '', reconnect: false })).rejects.toThrow(
        /Authorization Violation/,
      );
    } finally {
      await server.stop();
    }
  });

  it('keeps a store across servers, lets one server at a time use it, and reports connections and streams', async () => {
    const storeDir = join(dir, 'kept');
    const logFile = join(dir, 'logs', 'nats-server.log');
    const first = await startNatsServer({ storeDir, logFile, monitor: true });
    try {
      await expect(startNatsServer({ storeDir })).rejects.toThrow(NatsStoreInUseError);
      const nc = await connect({ servers: first.url, name: 'probe-client' });
      const jsm = await jetstreamManager(nc);
      await jsm.streams.add({ name: 'KEPT', subjects: ['kept.>'] });
      await jetstream(nc).publish('kept.one', 'x');
      const connz = (await (await fetch(`${first.monitorUrl}/connz`)).json()) as { connections: { name: string }[] };
      expect(connz.connections.map((c) => c.name)).toContain('probe-client');
      await nc.close();
    } finally {
      await first.stop();
    }
    expect(existsSync(storeDir)).toBe(true);
    expect(existsSync(join(storeDir, 'server.pid'))).toBe(false);
    expect(readFileSync(logFile, 'utf8')).toMatch(/Server is ready/);

    const second = await startNatsServer({ storeDir });
    try {
      const nc = await connect({ servers: second.url });
      const jsm = await jetstreamManager(nc);
      // The stream and its message, recovered from the kept store (a stopped server has written everything out).
      const info = await jsm.streams.info('KEPT');
      expect(info.state.messages).toBe(1);
      await nc.close();
    } finally {
      await second.stop();
    }
  });
});
