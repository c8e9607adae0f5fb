import type { Command } from 'commander';
import {
  WEBHOOK_DELIVERY_STATUSES,
  WEBHOOK_EVENTS,
  type RemovedWebhookV1,
  type SetWebhookReplyV1,
  type WebhookDeliveryListV1,
  type WebhookDeliveryViewV1,
  type WebhookEventV1,
  type WebhookListV1,
  type WebhookViewV1,
} from '@ormuz/contracts';
import { CliInputError, identifier, type CliContext } from '../context.js';

type DeliveryStatus = (typeof WEBHOOK_DELIVERY_STATUSES)[number];

/** One endpoint on one line: id, on or off, where, what it is sent, and what the operator called it. */
export function webhookLine(w: WebhookViewV1): string {
  const name = w.description ? `  ${JSON.stringify(w.description)}` : '';
  return `${w.webhook_id}  ${w.enabled ? 'enabled ' : 'disabled'}  ${w.url}  ${w.events.join(',')}${name}  created ${w.created_at}`;
}

/** Set: the endpoint's line, then a newly issued secret on a line of its own (easy to copy), with the warning. */
export function renderSetWebhook(r: SetWebhookReplyV1): string {
  if (r.secret === null) return webhookLine(r.webhook);
  return [
    webhookLine(r.webhook),
    'Signing secret, shown this once: verify Ormuz-Signature with it (README, "Webhooks"). Store it now.',
    r.secret,
  ].join('\n');
}

export const renderWebhookList = (r: WebhookListV1): string =>
  r.webhooks.length === 0 ? 'no webhooks' : r.webhooks.map(webhookLine).join('\n');

export const renderRemovedWebhook = (r: RemovedWebhookV1): string => `removed ${r.webhook_id} at ${r.removed_at}`;

/** One delivery: what, to which endpoint, where it stands, and its last answer or when it is tried next. */
export function deliveryLine(d: WebhookDeliveryViewV1): string {
  const last = d.last_status_code !== null ? `HTTP ${d.last_status_code}` : (d.last_error ?? 'not tried yet');
  const when = d.delivered_at
    ? `delivered ${d.delivered_at}`
    : d.next_attempt_at
      ? `next attempt ${d.next_attempt_at}`
      : `since ${d.created_at}`;
  const error = d.last_error && d.last_status_code !== null ? ` (${d.last_error})` : '';
  return `${d.delivery_id}  ${d.status.padEnd(9)}  ${d.event.padEnd(8)}  ${d.approval_id}  ${d.webhook_id}  attempts ${d.attempts}  ${last}${error}  ${when}`;
}

export const renderDeliveries = (r: WebhookDeliveryListV1): string =>
  r.deliveries.length === 0 ? 'no deliveries' : r.deliveries.map(deliveryLine).join('\n');

/** `--events staged,decided`: one or more of the webhook events, each once. */
export function webhookEvents(value: string): WebhookEventV1[] {
  const events = value.split(',').map((e) => e.trim());
  const unknown = events.filter((e) => !(WEBHOOK_EVENTS as readonly string[]).includes(e));
  if (value.trim() === '' || unknown.length > 0 || new Set(events).size !== events.length) {
    throw new CliInputError(
      `--events must list ${WEBHOOK_EVENTS.join(', ')} (comma-separated, each once), not ${JSON.stringify(value)}.`,
    );
  }
  return events as WebhookEventV1[];
}

/** `--url`: an absolute http(s) URL (approvals also refuses private addresses, unless its platform allows them). */
export function webhookUrl(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new CliInputError(`--url must be an absolute http or https URL, not ${JSON.stringify(value)}.`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new CliInputError(`--url must be an http or https URL, not ${url.protocol.replace(/:$/, '')}.`);
  }
  return value;
}

/** `--status`: what became of a delivery. */
export function deliveryStatus(value: string): DeliveryStatus {
  if (!(WEBHOOK_DELIVERY_STATUSES as readonly string[]).includes(value)) {
    throw new CliInputError(`--status must be one of ${WEBHOOK_DELIVERY_STATUSES.join(', ')}, not ${value}.`);
  }
  return value as DeliveryStatus;
}

/** `--limit`: 1 to 500 deliveries. */
export function deliveryLimit(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > 500) throw new CliInputError(`--limit must be from 1 to 500, not ${value}.`);
  return n;
}

/** `--description`: 1 to 200 characters. */
function description(value: string): string {
  if (value.length < 1 || value.length > 200) {
    throw new CliInputError(`--description must be 1 to 200 characters, not ${value.length}.`);
  }
  return value;
}

interface SetOptions {
  tenant: string;
  webhook?: string;
  url?: string;
  events?: WebhookEventV1[];
  enabled?: boolean;
  description?: string;
  rotateSecret?: boolean;
}

/**
 * `ormuz webhooks set|list|remove|deliveries`: a tenant's webhook endpoints, kept by approvals, which tells them of
 * staged, decided and expired approvals; and the log of what was sent. A signing secret is printed once, when issued.
 */
export function registerWebhookCommands(program: Command, ctx: () => CliContext): void {
  const webhooks = program
    .command('webhooks')
    .description("a tenant's webhook endpoints (told of staged, decided and expired approvals) and their delivery log");

  webhooks
    .command('set')
    .description('register an endpoint (no --webhook; its signing secret is printed once), or change one')
    .requiredOption('--tenant <tenant>', 'tenant id', identifier('--tenant'))
    .option('--webhook <id>', 'the endpoint to change (default: register a new one)', identifier('--webhook'))
    .option('--url <url>', 'where to POST (http or https; required for a new endpoint)', webhookUrl)
    .option('--events <list>', `what to send, comma-separated (default: ${WEBHOOK_EVENTS.join(',')})`, webhookEvents)
    .option('--enable', 'send to it (the default for a new endpoint)')
    .option('--disable', 'send it nothing until enabled again')
    .option('--description <text>', 'what the endpoint is (shown in lists)', description)
    .option('--rotate-secret', 'issue a new signing secret (the old one stops signing at once); printed once')
    .action(async (o: SetOptions & { enable?: boolean; disable?: boolean }) => {
      if (o.enable && o.disable) throw new CliInputError('Give --enable or --disable, not both.');
      if (!o.webhook && !o.url)
        throw new CliInputError('A new webhook needs --url (or name one to change with --webhook).');
      const reply = await ctx().call(
        'approvals.webhooks.set',
        {
          tenant: o.tenant,
          ...(o.webhook ? { webhook_id: o.webhook } : {}),
          ...(o.url ? { url: o.url } : {}),
          ...(o.events ? { events: o.events } : {}),
          ...(o.enable ? { enabled: true } : o.disable ? { enabled: false } : {}),
          ...(o.description ? { description: o.description } : {}),
          ...(o.rotateSecret ? { rotate_secret: true } : {}),
        },
        {
          ifUnanswered: {
            what: o.webhook ? `the change of webhook ${o.webhook}` : 'a new webhook endpoint',
            check:
              `\`ormuz webhooks list --tenant ${o.tenant}\` shows whether it took effect; a secret issued in the lost ` +
              'answer cannot be shown again: `--rotate-secret` issues another.',
          },
        },
      );
      ctx().print(reply, renderSetWebhook);
    });

  webhooks
    .command('list')
    .description("a tenant's webhook endpoints (never their secrets)")
    .requiredOption('--tenant <tenant>', 'tenant id', identifier('--tenant'))
    .action(async (o: { tenant: string }) => {
      ctx().print(await ctx().call('approvals.webhooks.list', { tenant: o.tenant }), renderWebhookList);
    });

  webhooks
    .command('remove')
    .description('remove an endpoint: it is sent nothing more; its deliveries stay in the log')
    .requiredOption('--tenant <tenant>', 'tenant id', identifier('--tenant'))
    .requiredOption('--webhook <id>', 'the endpoint', identifier('--webhook'))
    .action(async (o: { tenant: string; webhook: string }) => {
      const reply = await ctx().call('approvals.webhooks.remove', { tenant: o.tenant, webhook_id: o.webhook });
      ctx().print(reply, renderRemovedWebhook);
    });

  webhooks
    .command('deliveries')
    .description('the newest deliveries, newest first: status, attempts, last answer, next attempt')
    .requiredOption('--tenant <tenant>', 'tenant id', identifier('--tenant'))
    .option('--webhook <id>', 'one endpoint only', identifier('--webhook'))
    .option('--status <status>', `only ${WEBHOOK_DELIVERY_STATUSES.join(', ')}`, deliveryStatus)
    .option('--approval <id>', 'one approval only', identifier('--approval'))
    .option('--limit <n>', 'at most this many (1 to 500, default 100)', deliveryLimit)
    .action(
      async (o: { tenant: string; webhook?: string; status?: DeliveryStatus; approval?: string; limit?: number }) => {
        const reply = await ctx().call('approvals.webhooks.deliveries', {
          tenant: o.tenant,
          ...(o.webhook ? { webhook_id: o.webhook } : {}),
          ...(o.status ? { status: o.status } : {}),
          ...(o.approval ? { approval_id: o.approval } : {}),
          ...(o.limit !== undefined ? { limit: o.limit } : {}),
        });
        ctx().print(reply, renderDeliveries);
      },
    );
}
