/**
 * How webhook bodies are signed, and how a receiver checks them (Stripe's scheme, so receivers know it).
 *
 * `Ormuz-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>", keyed with the endpoint's secret>`.
 * The timestamp is inside the signed bytes, so a receiver that refuses signatures older than a few minutes also
 * refuses a captured request replayed later; each attempt is signed afresh with its own time. The secret is the whole
 * `whsec_…` string as issued, used as UTF-8 bytes.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

export const SIGNATURE_HEADER = 'Ormuz-Signature';
const SECRET_PREFIX = 'whsec_';

/** A new signing secret: 32 random bytes, base64url, behind `whsec_` (so a leaked one is easy to find). */
export function newWebhookSecret(): string {
  return `${SECRET_PREFIX}${randomBytes(32).toString('base64url')}`;
}

/** Hex HMAC-SHA256 of `<t>.<body>`. */
function mac(secret: string, timestamp: number, body: string): string {
  return createHmac('sha256', secret).update(`${timestamp}.${body}`, 'utf8').digest('hex');
}

/** The `Ormuz-Signature` value for `body` sent at `timestamp` (unix seconds). */
export function signatureHeader(secret: string, body: string, timestamp: number): string {
  return `t=${timestamp},v1=${mac(secret, timestamp, body)}`;
}

/** Why a signature was refused. */
export type SignatureProblem = 'malformed' | 'too_old' | 'mismatch';

/**
 * What a receiver does: parses the header, refuses a timestamp more than `toleranceSeconds` from `now` (default 300),
 * recomputes the HMAC over the raw body bytes as received (never a re-serialised parse) and compares in constant time.
 * Any `v1` entry may match (several are sent while a secret is being rotated). Returns undefined when it verifies.
 */
export function signatureProblem(
  header: string | undefined,
  body: string,
  secret: string,
  opts: { readonly toleranceSeconds?: number; readonly now?: Date } = {},
): SignatureProblem | undefined {
  if (!header) return 'malformed';
  let timestamp: number | undefined;
  const candidates: string[] = [];
  for (const part of header.split(',')) {
    const [key, value] = part.trim().split('=', 2);
    if (key === 't' && value && /^\d+$/.test(value)) timestamp = Number(value);
    else if (key === 'v1' && value && /^[0-9a-f]{64}$/.test(value)) candidates.push(value);
  }
  if (timestamp === undefined || candidates.length === 0) return 'malformed';
  const now = Math.floor((opts.now ?? new Date()).getTime() / 1000);
  if (Math.abs(now - timestamp) > (opts.toleranceSeconds ?? 300)) return 'too_old';
  const expected = Buffer.from(mac(secret, timestamp, body), 'hex');
  const matches = candidates.some((c) => timingSafeEqual(Buffer.from(c, 'hex'), expected));
  return matches ? undefined : 'mismatch';
}
