import { randomBytes } from 'node:crypto';
import { loadApprovalsConfig } from '../config.js';
import { WebhookSecretBox, WebhookSecretUnavailable } from './webhook-secret-box.js';

const boxWith = (key?: string) =>
  new WebhookSecretBox(loadApprovalsConfig(key === undefined ? {} : { ORMUZ_WEBHOOKS_SECRET_KEY: key }));
const KEY = randomBytes(32).toString('base64');
const OWNER = { tenant: 'acme', webhook_id: 'wh_0123456789abcdef' };
const SECRET = `whsec_${'s'.repeat(43)}`;

describe('webhook secrets at rest', () => {
  it('seals with a key: nothing of the secret is stored, and it opens for its own endpoint only', () => {
    const box = boxWith(KEY);
    const stored = box.store(OWNER, SECRET);
    expect(stored.secret).toBeNull();
    expect(stored.secret_sealed).toMatch(/^v1\.[\w-]+\.[\w-]+\.[\w-]+$/);
    expect(stored.secret_sealed).not.toContain('sss');
    expect(box.open(OWNER, stored)).toBe(SECRET);
    // A fresh IV each time: the same secret never seals the same way twice.
    expect(box.store(OWNER, SECRET).secret_sealed).not.toBe(stored.secret_sealed);
    expect(() => box.open({ ...OWNER, tenant: 'globex' }, stored)).toThrow(WebhookSecretUnavailable);
    expect(() => box.open({ ...OWNER, webhook_id: 'wh_other' }, stored)).toThrow(/does not open/);
  });

  it('refuses a sealed secret that was tampered with, or sealed under another key', () => {
    const stored = boxWith(KEY).store(OWNER, SECRET);
    const [v, iv, tag, ct] = stored.secret_sealed!.split('.');
    const flipped = Buffer.from(ct!, 'base64url');
    flipped[0]! ^= 1;
    const tampered = { secret: null, secret_sealed: [v, iv, tag, flipped.toString('base64url')].join('.') };
    expect(() => boxWith(KEY).open(OWNER, tampered)).toThrow(/does not open/);
    expect(() => boxWith(randomBytes(32).toString('base64')).open(OWNER, stored)).toThrow(/does not open/);
    expect(() => boxWith().open(OWNER, stored)).toThrow(/encrypted and approvals has no ORMUZ_WEBHOOKS_SECRET_KEY/);
  });

  it('stores as issued without a key, and reads a secret stored so with or without one', () => {
    const plain = boxWith().store(OWNER, SECRET);
    expect(plain).toEqual({ secret: SECRET, secret_sealed: null });
    expect(boxWith().open(OWNER, plain)).toBe(SECRET);
    expect(boxWith(KEY).open(OWNER, plain)).toBe(SECRET);
    expect(boxWith().seals).toBe(false);
    expect(boxWith(KEY).seals).toBe(true);
  });

  it('refuses a key that is not 32 bytes of base64 at start', () => {
    for (const bad of ['short', randomBytes(16).toString('base64'), `${KEY}!`]) {
      expect(() => boxWith(bad)).toThrow(/ORMUZ_WEBHOOKS_SECRET_KEY must be 32 bytes in base64/);
    }
  });
});
