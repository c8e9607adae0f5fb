import { ConfigError } from '@ormuz/service-kit';
import { loadAuditConfig } from './config.js';

describe('audit config', () => {
  it('defaults to batches of 256 pulled for a second', () => {
    expect(loadAuditConfig({})).toMatchObject({ namespace: 'ormuz', batchSize: 256, pullExpiresMs: 1000 });
  });

  it('refuses a pull shorter than the client allows, naming the variable', () => {
    expect(() => loadAuditConfig({ AUDIT_PULL_MS: '200' })).toThrow(ConfigError);
    expect(() => loadAuditConfig({ AUDIT_PULL_MS: '200' })).toThrow(/AUDIT_PULL_MS=200/);
  });
});
