import { createHmac } from 'node:crypto';
import { newWebhookSecret, signatureHeader, signatureProblem } from './webhook-signature.js';

describe('webhook signatures', () => {
  const secret = newWebhookSecret();
  const body = '{"type":"approval.staged","approval_id":"apr_1"}';
  const now = new Date('2030-01-01T00:00:00Z');
  const t = Math.floor(now.getTime() / 1000);

  it('issues long random secrets behind whsec_', () => {
    expect(secret).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
    expect(newWebhookSecret()).not.toBe(secret);
  });

  it('signs "<t>.<body>" with HMAC-SHA256, as a receiver recomputes it', () => {
    const expected = createHmac('sha256', secret).update(`${t}.${body}`).digest('hex');
    expect(signatureHeader(secret, body, t)).toBe(`t=${t},v1=${expected}`);
  });

  it('verifies its own signature within the tolerance', () => {
    expect(signatureProblem(signatureHeader(secret, body, t), body, secret, { now })).toBeUndefined();
    expect(signatureProblem(signatureHeader(secret, body, t - 299), body, secret, { now })).toBeUndefined();
  });

  it('refuses another body, another secret, an old timestamp and a malformed header', () => {
    const header = signatureHeader(secret, body, t);
    expect(signatureProblem(header, `${body} `, secret, { now })).toBe('mismatch');
    expect(signatureProblem(header, body, newWebhookSecret(), { now })).toBe('mismatch');
    expect(signatureProblem(signatureHeader(secret, body, t - 301), body, secret, { now })).toBe('too_old');
    expect(signatureProblem(header, body, secret, { now, toleranceSeconds: 0 })).toBeUndefined();
    for (const bad of [undefined, '', 'v1=abc', `t=${t}`, `t=x,v1=${'0'.repeat(64)}`]) {
      expect(signatureProblem(bad, body, secret, { now })).toBe('malformed');
    }
  });

  it('accepts any of several v1 entries (a rotation in progress)', () => {
    const header = `${signatureHeader(newWebhookSecret(), body, t)},${signatureHeader(secret, body, t).split(',')[1]}`;
    expect(signatureProblem(header, body, secret, { now })).toBeUndefined();
  });
});
