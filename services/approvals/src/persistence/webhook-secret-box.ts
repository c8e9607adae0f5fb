import { Inject, Injectable } from '@nestjs/common';
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { APPROVALS_CONFIG, type ApprovalsConfig } from '../config.js';

/** A signing secret as the `webhooks` table keeps it: in plain text, or sealed; exactly one of the two is set. */
export interface StoredSecret {
  readonly secret: string | null;
  readonly secret_sealed: string | null;
}

/** Which endpoint a secret belongs to: bound into the seal, so a sealed secret copied to another row does not open. */
export interface SecretOwner {
  readonly tenant: string;
  readonly webhook_id: string;
}

/** The stored secret cannot be read: sealed without the key at hand, or with another key. Says what to do. */
export class WebhookSecretUnavailable extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'WebhookSecretUnavailable';
  }
}

const VERSION = 'v1';
const IV_BYTES = 12;

/**
 * Encrypts webhook signing secrets at rest with AES-256-GCM under `ORMUZ_WEBHOOKS_SECRET_KEY`: a database dump or a
 * read-only SQL user then does not hand out the keys that sign tenants' webhooks. The platform must sign with the
 * secret, so it cannot be a hash. Sealed as `v1.<iv>.<tag>.<ciphertext>` (base64url), a fresh 96-bit IV each time, the
 * endpoint's tenant and id as additional data. Without the key, secrets are stored as issued; rows stored so keep
 * working once a key is set, and are sealed the next time their endpoint is set.
 */
@Injectable()
export class WebhookSecretBox {
  private readonly key: Buffer | undefined;

  constructor(@Inject(APPROVALS_CONFIG) config: Pick<ApprovalsConfig, 'webhooks'>) {
    this.key = config.webhooks.secretKey;
  }

  /** True when secrets are stored sealed. */
  get seals(): boolean {
    return this.key !== undefined;
  }

  /** How to store `secret` of `owner`: sealed when there is a key, else as issued. */
  store(owner: SecretOwner, secret: string): StoredSecret {
    if (!this.key) return { secret, secret_sealed: null };
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    cipher.setAAD(additionalData(owner));
    const ciphertext = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
    const sealed = [iv, cipher.getAuthTag(), ciphertext].map((b) => b.toString('base64url'));
    return { secret: null, secret_sealed: [VERSION, ...sealed].join('.') };
  }

  /** The secret to sign with. Throws {@link WebhookSecretUnavailable} when it is sealed and cannot be opened. */
  open(owner: SecretOwner, stored: StoredSecret): string {
    if (stored.secret_sealed === null) {
      if (stored.secret === null) throw new WebhookSecretUnavailable(`webhook ${owner.webhook_id} has no secret`);
      return stored.secret;
    }
    if (!this.key) {
      throw new WebhookSecretUnavailable(
        'its signing secret is encrypted and approvals has no ORMUZ_WEBHOOKS_SECRET_KEY: set the key it was sealed with',
      );
    }
    const [version, iv, tag, ciphertext] = stored.secret_sealed.split('.');
    try {
      if (version !== VERSION || !iv || !tag || ciphertext === undefined) throw new Error('not a sealed secret');
      const decipher = createDecipheriv('aes-256-gcm', this.key, Buffer.from(iv, 'base64url'));
      decipher.setAAD(additionalData(owner));
      decipher.setAuthTag(Buffer.from(tag, 'base64url'));
      return Buffer.concat([decipher.update(Buffer.from(ciphertext, 'base64url')), decipher.final()]).toString('utf8');
    } catch {
      throw new WebhookSecretUnavailable(
        'its signing secret does not open with ORMUZ_WEBHOOKS_SECRET_KEY (another key sealed it): set that key, or ' +
          'rotate the secret (`ormuz webhooks set --rotate-secret`)',
      );
    }
  }
}

function additionalData(owner: SecretOwner): Buffer {
  return Buffer.from(`ormuz-webhook-secret\0${owner.tenant}\0${owner.webhook_id}`, 'utf8');
}
