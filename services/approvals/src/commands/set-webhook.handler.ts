import { Command, CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import { randomBytes } from 'node:crypto';
import { WEBHOOK_EVENTS, type SetWebhookReplyV1, type SetWebhookRequestV1 } from '@ormuz/contracts';
import { WebhookAddressGuard, WebhookAddressRefused } from '../delivery/webhook-address-guard.js';
import { InvalidWebhookError, WebhookNotFoundError } from '../domain/errors.js';
import { newWebhookSecret } from '../domain/webhook-signature.js';
import { toWebhookView, WebhookEndpointsRepository } from '../persistence/webhook-endpoints.repository.js';
import { WebhookSecretBox } from '../persistence/webhook-secret-box.js';

export class SetWebhookCommand extends Command<SetWebhookReplyV1> {
  constructor(readonly request: SetWebhookRequestV1) {
    super();
  }
}

/**
 * Registers a tenant's endpoint, or changes one. The signing secret is made here, never chosen by the caller (so it
 * is long and random), and answered only when issued: at registration and on `rotate_secret`. It is stored sealed when
 * the platform has a key ({@link WebhookSecretBox}), and a secret stored in plain text before then is sealed here.
 */
@CommandHandler(SetWebhookCommand)
export class SetWebhookHandler implements ICommandHandler<SetWebhookCommand> {
  constructor(
    private readonly endpoints: WebhookEndpointsRepository,
    private readonly guard: WebhookAddressGuard,
    private readonly box: WebhookSecretBox,
  ) {}

  async execute({ request }: SetWebhookCommand): Promise<SetWebhookReplyV1> {
    if (request.url !== undefined) await this.assertSendable(request.url);
    const now = new Date();
    if (request.webhook_id === undefined) {
      if (request.url === undefined) {
        throw new InvalidWebhookError('A new webhook needs a url (http or https) to send to.');
      }
      const secret = newWebhookSecret();
      const owner = { tenant: request.tenant, webhook_id: `wh_${randomBytes(8).toString('hex')}` };
      const row = await this.endpoints.create({
        ...owner,
        url: request.url,
        events: [...(request.events ?? WEBHOOK_EVENTS)],
        enabled: request.enabled ?? true,
        description: request.description ?? null,
        ...this.box.store(owner, secret),
        secret_issued_at: now,
        created_at: now,
        updated_at: now,
      });
      return { webhook: toWebhookView(row), secret };
    }
    const owner = { tenant: request.tenant, webhook_id: request.webhook_id };
    const secret = request.rotate_secret ? newWebhookSecret() : undefined;
    const row = await this.endpoints.update(
      request.tenant,
      request.webhook_id,
      {
        ...(request.url !== undefined ? { url: request.url } : {}),
        ...(request.events !== undefined ? { events: request.events } : {}),
        ...(request.enabled !== undefined ? { enabled: request.enabled } : {}),
        ...(request.description !== undefined ? { description: request.description } : {}),
        ...(secret !== undefined ? { secret: this.box.store(owner, secret) } : {}),
      },
      now,
    );
    if (!row) throw new WebhookNotFoundError(request.tenant, request.webhook_id);
    if (secret === undefined && this.box.seals && row.secret !== null) {
      // Stored in plain text before the platform had a key: sealed now, as every later secret is.
      await this.endpoints.restore(request.tenant, request.webhook_id, this.box.store(owner, row.secret));
    }
    return { webhook: toWebhookView(row), secret: secret ?? null };
  }

  /**
   * Refuses a URL the deliverer would not POST to: anything but an absolute http(s) URL with a host, and (unless the
   * platform allows them) a host that is or resolves to a private address.
   */
  private async assertSendable(url: string): Promise<void> {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      throw new InvalidWebhookError(`${JSON.stringify(url)} is not a URL. Give an absolute http or https URL.`);
    }
    if (!parsed.hostname) throw new InvalidWebhookError(`${JSON.stringify(url)} names no host.`);
    try {
      await this.guard.assertSendable(parsed);
    } catch (err) {
      if (err instanceof WebhookAddressRefused) throw new InvalidWebhookError(`Not registered: ${err.message}`);
      throw err;
    }
  }
}
