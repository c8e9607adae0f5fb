import { ConfigError, loadBaseConfig } from './config.js';

describe('loadBaseConfig: NATS credentials', () => {
  it('connects without credentials when neither NATS_USER nor NATS_PASSWORD is set', () => {
    const config = loadBaseConfig({});
    expect(config.natsUser).toBeUndefined();
    expect(config.natsPassword).toBeUndefined();
  });

  it('reads the user and its password', () => {
    const config = loadBaseConfig({ NATS_USER: 'device-bridge', NATS_PASSWORD: 'p0123' });
    expect(config).toMatchObject({ natsUser: 'device-bridge', natsPassword: 'p0123' });
  });

  it('refuses one without the other, naming the missing variable', () => {
    expect(() => loadBaseConfig({ NATS_USER: 'policy' })).toThrow(ConfigError);
    expect(() => loadBaseConfig({ NATS_USER: 'policy' })).toThrow(/NATS_USER=policy is set without NATS_PASSWORD/);
    expect(() => loadBaseConfig({ NATS_PASSWORD: 'p0123' })).toThrow(/NATS_PASSWORD is set without NATS_USER/);
  });

  it('refuses a user that is not one subject token, since it names the reply inboxes (_INBOX.<user>)', () => {
    for (const user of ['a.b', 'a*', '>', 'a b']) {
      expect(() => loadBaseConfig({ NATS_USER: user, NATS_PASSWORD: 'p0123' })).toThrow(/NATS_USER=.* cannot be used/);
    }
  });
});

describe('loadBaseConfig: the probes listener', () => {
  it('serves no probes unless HEALTH_PORT is set', () => {
    expect(loadBaseConfig({}).health).toBeUndefined();
    expect(loadBaseConfig({ HEALTH_PORT: '' }).health).toBeUndefined();
  });

  it('reads the port, the address, the lag bound and the check timeout, with their defaults', () => {
    expect(loadBaseConfig({ HEALTH_PORT: '9090' }).health).toEqual({
      port: 9090,
      host: '127.0.0.1',
      maxLag: 10_000,
      checkTimeoutMs: 2000,
    });
    expect(
      loadBaseConfig({ HEALTH_PORT: '0', HEALTH_HOST: '0.0.0.0', HEALTH_MAX_LAG: '0', HEALTH_CHECK_TIMEOUT_MS: '500' })
        .health,
    ).toEqual({ port: 0, host: '0.0.0.0', maxLag: 0, checkTimeoutMs: 500 });
  });

  it('refuses a port, a bound or a timeout that is not a whole number in range, naming the variable', () => {
    expect(() => loadBaseConfig({ HEALTH_PORT: 'http' })).toThrow(
      /HEALTH_PORT=http is not an integer between 0 and 65535/,
    );
    expect(() => loadBaseConfig({ HEALTH_PORT: '70000' })).toThrow(/HEALTH_PORT=70000/);
    expect(() => loadBaseConfig({ HEALTH_PORT: '9090', HEALTH_MAX_LAG: '-1' })).toThrow(/HEALTH_MAX_LAG=-1/);
    expect(() => loadBaseConfig({ HEALTH_PORT: '9090', HEALTH_CHECK_TIMEOUT_MS: '0' })).toThrow(
      /HEALTH_CHECK_TIMEOUT_MS=0/,
    );
  });
});

describe('loadBaseConfig: stream replicas', () => {
  it('keeps one copy of each stream unless ORMUZ_STREAM_REPLICAS asks for more, and refuses what no cluster has', () => {
    expect(loadBaseConfig({}).streamReplicas).toBe(1);
    expect(loadBaseConfig({ ORMUZ_STREAM_REPLICAS: '3' }).streamReplicas).toBe(3);
    expect(() => loadBaseConfig({ ORMUZ_STREAM_REPLICAS: '0' })).toThrow(/ORMUZ_STREAM_REPLICAS=0/);
    expect(() => loadBaseConfig({ ORMUZ_STREAM_REPLICAS: '6' })).toThrow(/ORMUZ_STREAM_REPLICAS=6/);
  });
});
