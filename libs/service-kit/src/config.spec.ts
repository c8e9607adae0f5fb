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
