import { Inject, Injectable } from '@nestjs/common';
import type { SubmitCallReplyV1, SubmitCallRequestV1 } from '@ormuz/contracts';
import { callService, INFRA, RemoteError, type Infrastructure } from '@ormuz/service-kit';
import { MODEL_LOOP_CONFIG, type ModelLoopConfig } from '../config.js';

/** What came of handing one request to policy. */
export type SubmitOutcome =
  | { readonly kind: 'decided'; readonly reply: SubmitCallReplyV1 }
  /** Policy answered that the request itself cannot be accepted (malformed, conflicting, too large). */
  | { readonly kind: 'rejected'; readonly code: string; readonly message: string };

// Errors that say nothing about the request: the submit is retried rather than reported to the model.
const TRANSIENT = new Set([
  'internal',
  'retries_exhausted',
  'concurrency_conflict',
  'stream_missing',
  'nats_unavailable',
  'postgres_unavailable',
]);

/** Step 3 of the loop: every tool request goes to policy's gate over NATS (`<ns>.cmd.policy.submit`). */
@Injectable()
export class PolicyClient {
  constructor(
    @Inject(INFRA) private readonly infra: Infrastructure,
    @Inject(MODEL_LOOP_CONFIG) private readonly config: ModelLoopConfig,
  ) {}

  /**
   * Submits one request. A re-submit of a recorded call is a duplicate that observes the original. Throws
   * ServiceUnavailableError or a transient RemoteError, which the caller retries.
   */
  async submit(request: SubmitCallRequestV1): Promise<SubmitOutcome> {
    try {
      const reply = await callService<SubmitCallReplyV1>(
        this.infra.nc,
        this.config.namespace,
        'policy',
        'submit',
        request,
        this.config.policyTimeoutMs,
      );
      return { kind: 'decided', reply };
    } catch (err) {
      if (err instanceof RemoteError && !TRANSIENT.has(err.code)) {
        return { kind: 'rejected', code: err.code, message: err.message };
      }
      throw err;
    }
  }
}
