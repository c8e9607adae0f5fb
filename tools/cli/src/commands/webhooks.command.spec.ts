import { Command } from 'commander';
import type { WebhookDeliveryViewV1, WebhookViewV1 } from '@ormuz/contracts';
import type { CliContext } from '../context.js';
import {
  deliveryLine,
  registerWebhookCommands,
  renderDeliveries,
  renderRemovedWebhook,
  renderSetWebhook,
  renderWebhookList,
  webhookEvents,
  webhookLine,
} from './webhooks.command.js';

const HOOK: WebhookViewV1 = {
  webhook_id: 'wh_0123456789abcdef',
  tenant: 'acme',
  url: 'https://hooks.example.com/ormuz',
  events: ['staged', 'decided'],
  enabled: true,
  description: 'pager',
  created_at: '2030-01-01T00:00:00.000Z',
  updated_at: '2030-01-01T00:00:00.000Z',
  secret_issued_at: '2030-01-01T00:00:00.000Z',
};
const SECRET = `whsec_${'a'.repeat(43)}`;
const DELIVERY: WebhookDeliveryViewV1 = {
  delivery_id: 'dlv_1',
  webhook_id: HOOK.webhook_id,
  tenant: 'acme',
  event_id: 'evt-1',
  event: 'staged',
  approval_id: 'apr_1',
  call_id: 'call_1',
  status: 'pending',
  attempts: 2,
  next_attempt_at: '2030-01-01T00:01:00.000Z',
  last_status_code: 503,
  last_error: 'HTTP 503',
  created_at: '2030-01-01T00:00:00.000Z',
  delivered_at: null,
  body: '{}',
  attempt_log: [],
};

describe('ormuz webhooks', () => {
  it('prints an endpoint on one line: id, on or off, url, events, description', () => {
    expect(webhookLine(HOOK)).toBe(
      'wh_0123456789abcdef  enabled   https://hooks.example.com/ormuz  staged,decided  "pager"  created 2030-01-01T00:00:00.000Z',
    );
    expect(webhookLine({ ...HOOK, enabled: false, description: null })).toMatch(
      / disabled {2}https:\S+ {2}staged,decided {2}created/,
    );
  });

  it('prints a new secret once, on a line of its own, and no secret line when none was issued', () => {
    expect(renderSetWebhook({ webhook: HOOK, secret: SECRET }).split('\n')).toEqual([
      webhookLine(HOOK),
      expect.stringMatching(/shown this once/),
      SECRET,
    ]);
    expect(renderSetWebhook({ webhook: HOOK, secret: null })).toBe(webhookLine(HOOK));
  });

  it('prints deliveries with their last answer and when they are tried next, or were delivered', () => {
    expect(deliveryLine(DELIVERY)).toBe(
      `dlv_1  pending    staged    apr_1  ${HOOK.webhook_id}  attempts 2  HTTP 503 (HTTP 503)  next attempt 2030-01-01T00:01:00.000Z`,
    );
    const delivered = {
      ...DELIVERY,
      status: 'delivered' as const,
      last_status_code: 200,
      last_error: null,
      next_attempt_at: null,
      delivered_at: '2030-01-01T00:02:00.000Z',
    };
    expect(deliveryLine(delivered)).toMatch(
      /delivered .* attempts 2 {2}HTTP 200 {2}delivered 2030-01-01T00:02:00\.000Z$/,
    );
    const refused = {
      ...DELIVERY,
      status: 'failed' as const,
      last_status_code: null,
      last_error: 'not sent: 10.0.0.1 is a private address',
      next_attempt_at: null,
    };
    expect(deliveryLine(refused)).toMatch(/failed .* not sent: 10\.0\.0\.1 is a private address {2}since /);
  });

  it('says when there is nothing, and what was removed', () => {
    expect(renderWebhookList({ webhooks: [] })).toBe('no webhooks');
    expect(renderWebhookList({ webhooks: [HOOK] })).toBe(webhookLine(HOOK));
    expect(renderDeliveries({ deliveries: [] })).toBe('no deliveries');
    expect(renderRemovedWebhook({ webhook_id: 'wh_1', removed_at: '2030-01-01T00:00:00.000Z' })).toBe(
      'removed wh_1 at 2030-01-01T00:00:00.000Z',
    );
  });

  it('reads --events as webhook events, each once', () => {
    expect(webhookEvents('staged,expired')).toEqual(['staged', 'expired']);
    for (const bad of ['', 'staged,staged', 'approved', 'staged,'])
      expect(() => webhookEvents(bad)).toThrow(/--events must list staged, decided, expired/);
  });

  describe('commands', () => {
    const program = () => {
      const p = new Command('ormuz').exitOverride().configureOutput({ writeErr: () => undefined });
      const unreachable = (): CliContext => {
        throw new Error('the command reached approvals although its input was refused');
      };
      registerWebhookCommands(p, unreachable);
      return p;
    };

    it('are set, list, remove and deliveries', () => {
      expect(program().commands[0]!.commands.map((c) => c.name())).toEqual(['set', 'list', 'remove', 'deliveries']);
    });

    it.each([
      [['set', '--tenant', 'acme'], /A new webhook needs --url/],
      [['set', '--tenant', 'acme', '--url', 'ftp://example.com/x'], /--url must be an http or https URL, not ftp/],
      [['set', '--tenant', 'acme', '--url', 'example.com/x'], /--url must be an absolute http or https URL/],
      [['set', '--tenant', 'acme', '--webhook', 'wh_1', '--enable', '--disable'], /--enable or --disable, not both/],
      [['set', '--tenant', 'acme', '--url', 'https://x.example', '--events', 'all'], /--events must list/],
      [['remove', '--tenant', 'acme'], /required option '--webhook <id>' not specified/],
      [['remove', '--tenant', 'acme', '--webhook', 'a.b'], /--webhook "a\.b" is not a valid identifier/],
      [['deliveries', '--tenant', 'acme', '--status', 'lost'], /--status must be one of pending, delivered, failed/],
      [['deliveries', '--tenant', 'acme', '--limit', '501'], /--limit must be from 1 to 500/],
      [['list', '--tenant', 'a>b'], /--tenant "a>b" is not a valid identifier/],
    ])('refuses %j before calling approvals', async (args, message) => {
      await expect(program().parseAsync(['webhooks', ...args], { from: 'user' })).rejects.toThrow(message);
    });
  });
});
