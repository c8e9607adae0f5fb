import { DEFAULT_DATABASE_URL, DEFAULT_NATS_URL, testEnv } from './env.js';

describe('testEnv', () => {
  it('uses the local servers when nothing is set', () => {
    expect(testEnv({})).toEqual({ natsUrl: DEFAULT_NATS_URL, databaseUrl: DEFAULT_DATABASE_URL });
    expect(DEFAULT_NATS_URL).toBe('nats://127.0.0.1:4222');
    expect(DEFAULT_DATABASE_URL).toBe('postgres://postgres@127.0.0.1:5432/test');
  });

  it('takes NATS_URL and DATABASE_URL from the environment', () => {
    expect(testEnv({ NATS_URL: 'nats://n:1', DATABASE_URL: 'postgres://u@d:2/x' })).toEqual({
      natsUrl: 'nats://n:1',
      databaseUrl: 'postgres://u@d:2/x',
    });
  });

  it('treats an empty variable as unset', () => {
    expect(testEnv({ NATS_URL: '', DATABASE_URL: '' })).toEqual({
      natsUrl: DEFAULT_NATS_URL,
      databaseUrl: DEFAULT_DATABASE_URL,
    });
  });
});
