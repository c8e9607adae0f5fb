/**
 * A live stream is checked once, when it opens; it must still not outlive the credential that opened it. This watch
 * tells its stream when that credential stops being valid: a JWT at its `exp` (nothing can revoke it earlier, so a
 * timer is exact), an API key (or a token without `exp`) when a periodic re-verification refuses it, which is how a
 * revocation reaches a stream opened before it. The stream then sends an `end` event saying why and closes.
 */
import { UnauthenticatedError, type Authenticator } from '@ormuz/auth';
import { tokenExpiry } from './bearer.js';

/** Why a stream ended for its credential: the `end` event's data. */
export interface CredentialEnd {
  readonly reason: 'token_expired' | 'credential_refused';
  readonly message: string;
}

export interface CredentialWatchOptions {
  /** How often a credential without `exp` (an API key) is verified again, in milliseconds. */
  readonly recheckMs: number;
  /** Told of a re-verification that failed for another reason than the credential (the database is down). */
  readonly onRecheckError?: (err: Error) => void;
}

/** setTimeout holds at most ~24.8 days; a longer wait is cut short (the stream ends, the page reconnects). */
const MAX_TIMER_MS = 2 ** 31 - 1;

export class CredentialWatch {
  private expiry: NodeJS.Timeout | undefined;
  private recheck: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(
    private readonly authenticator: Pick<Authenticator, 'fromHeader'>,
    private readonly bearer: string,
    private readonly options: CredentialWatchOptions,
  ) {}

  /** Calls `onEnd` once, when the credential stops being valid, unless stopped first. */
  start(onEnd: (end: CredentialEnd) => void): void {
    const end = (e: CredentialEnd) => {
      if (this.stopped) return;
      this.stop();
      onEnd(e);
    };
    const expiresAt = tokenExpiry(this.bearer);
    if (expiresAt) {
      const ms = Math.min(Math.max(0, expiresAt.getTime() - Date.now()), MAX_TIMER_MS);
      this.expiry = setTimeout(
        () => end({ reason: 'token_expired', message: 'Your token expired: sign in again.' }),
        ms,
      );
      return;
    }
    const again = () => {
      this.recheck = setTimeout(() => {
        this.authenticator.fromHeader(`Bearer ${this.bearer}`).then(
          () => {
            if (!this.stopped) again();
          },
          (err: unknown) => {
            if (err instanceof UnauthenticatedError) {
              end({ reason: 'credential_refused', message: `${err.message} Sign in again.` });
            } else if (!this.stopped) {
              // Not a verdict on the credential: keep the stream, and ask again next time.
              this.options.onRecheckError?.(err as Error);
              again();
            }
          },
        );
      }, this.options.recheckMs);
    };
    again();
  }

  /** Stops watching (the stream closed for another reason). Idempotent. */
  stop(): void {
    this.stopped = true;
    clearTimeout(this.expiry);
    clearTimeout(this.recheck);
  }
}
