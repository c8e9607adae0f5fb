import { natsPasswordVariable, serviceNatsEnv } from './services.js';

describe('the NATS user a started service connects as', () => {
  it("is the service's own, with the password from NATS_<SERVICE>_PASSWORD", () => {
    expect(natsPasswordVariable('device-bridge')).toBe('NATS_DEVICE_BRIDGE_PASSWORD');
    const env = { NATS_USER: 'cli', NATS_PASSWORD: 'pcli', NATS_DEVICE_BRIDGE_PASSWORD: 'pbridge' };
    expect(serviceNatsEnv('device-bridge', env)).toEqual({ NATS_USER: 'device-bridge', NATS_PASSWORD: 'pbridge' });
  });

  it("is never the CLI's: a CLI with a user but no password for the service is refused, naming the variable", () => {
    expect(() => serviceNatsEnv('model-loop', { NATS_USER: 'cli', NATS_PASSWORD: 'pcli' })).toThrow(
      /model-loop connects to NATS as its own user, but NATS_MODEL_LOOP_PASSWORD is not set/,
    );
  });

  it('is none on a server without authorization (no user, no password)', () => {
    expect(serviceNatsEnv('policy', {})).toEqual({});
  });
});
