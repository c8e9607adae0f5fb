import { OrmuzError } from '@ormuz/contracts';

export class ApprovalNotFoundError extends OrmuzError {
  readonly code = 'approval_not_found';
  constructor(tenant: string, approvalId: string) {
    super(`No approval ${approvalId} exists for tenant ${tenant}. List pending approvals to see their ids.`);
  }
}

/**
 * The log did not acknowledge the decision in time: it may or may not be recorded. Says how to find out, and that
 * sending the same decision again is safe (the same decision by the same person observes the original).
 */
export class DecisionUnacknowledgedError extends OrmuzError {
  // The event log's code for an unacknowledged append, so every transport maps it as it maps that (HTTP 503).
  readonly code = 'append_unacknowledged';
  constructor(
    decision: 'approve' | 'deny',
    request: { readonly tenant: string; readonly approval_id: string },
    decidedBy: string,
    callId: string,
  ) {
    super(
      `Your ${decision} of approval ${request.approval_id} may or may not have been recorded: the event log did not ` +
        `acknowledge it in time. Find out with \`ormuz call status --tenant ${request.tenant} --call ${callId}\` ` +
        `(or \`ormuz approvals list --tenant ${request.tenant} --all\`), or send the same decision again as ` +
        `${decidedBy}: it is safe, a repeat observes the original.`,
    );
  }
}

export class WebhookNotFoundError extends OrmuzError {
  readonly code = 'webhook_not_found';
  constructor(tenant: string, webhookId: string) {
    super(`No webhook ${webhookId} is registered for tenant ${tenant}. List them with approvals.webhooks.list.`);
  }
}

/** A registration the platform cannot send to: a URL that is not http(s), or a new endpoint without one. */
export class InvalidWebhookError extends OrmuzError {
  readonly code = 'invalid_webhook';
}
