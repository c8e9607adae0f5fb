/* global document */
// The Webhooks view: the tenant's endpoints and, under each, its delivery log (what was sent, how it went, when it is
// tried next). For operators and administrators, who manage webhooks; everyone else is told so instead. It is read
// when the view is opened and on Refresh, never live: a delivery log changes too often to redraw as it happens.
// Like the rest of the console, every value becomes a text node (dom.js): a URL or an error is shown as the text it is.
import { fill, h, when } from './dom.js';

/** Who may open the view: the roles `approvals.webhooks.list` needs (libs/auth ACCESS). */
export function managesWebhooks(me) {
  return Boolean(me?.roles?.some((role) => role === 'operator' || role === 'admin'));
}

/**
 * Draws the view into `view` for the signed-in `me`. `api(path)` fetches JSON with the console's credential,
 * `tenantPath` is `/v1/tenants/<tenant>`.
 */
export async function showWebhooks(view, { me, api, tenantPath }) {
  const title = h('h2', { id: 'webhooks-title', tabindex: -1 }, 'Webhooks');
  const back = h('p', {}, h('a', { href: '#/' }, '← Back to the inbox'));
  if (!managesWebhooks(me)) {
    fill(
      view,
      back,
      title,
      h(
        'p',
        { class: 'notice', id: 'webhooks-not-allowed' },
        `Webhooks are managed by the tenant's operators and administrators. You are signed in as ${me.subject}`,
        me.roles.length ? ` (${me.roles.join(', ')})` : ' (no role)',
        ', so this view is not available to you.',
      ),
    );
    title.focus();
    return;
  }
  const status = h('p', { class: 'count', id: 'webhooks-status', role: 'status' }, 'Loading…');
  const body = h('div', { id: 'webhooks-list', 'aria-busy': 'true' });
  const refresh = h('button', { type: 'button', id: 'webhooks-refresh', onclick: () => load() }, 'Refresh');
  fill(view, back, h('div', { class: 'heading' }, title, refresh, status), body);
  title.focus();

  async function load() {
    body.setAttribute('aria-busy', 'true');
    refresh.disabled = true;
    status.textContent = 'Loading…';
    try {
      const [{ webhooks }, { deliveries }] = await Promise.all([
        api(`${tenantPath}/webhooks`),
        api(`${tenantPath}/webhook-deliveries?limit=200`),
      ]);
      fill(
        body,
        webhooks.length === 0
          ? h(
              'p',
              { class: 'empty' },
              'No webhooks are registered for this tenant. Register one with ',
              h('code', {}, `npx ormuz webhooks set --tenant ${me.tenant} --url https://…`),
              '.',
            )
          : webhooks.map((w) =>
              endpoint(
                w,
                deliveries.filter((d) => d.webhook_id === w.webhook_id),
              ),
            ),
      );
      status.textContent = `${webhooks.length} endpoint${webhooks.length === 1 ? '' : 's'} · read ${when(new Date().toISOString())}`;
    } catch (err) {
      fill(body, h('p', { class: 'error' }, `The webhooks could not be read: ${err.message}`));
      status.textContent = '';
    } finally {
      body.setAttribute('aria-busy', 'false');
      refresh.disabled = false;
    }
  }

  await load();
}

function endpoint(w, deliveries) {
  const heading = `webhook-${w.webhook_id}`;
  return h(
    'section',
    { class: 'webhook', 'data-webhook-id': w.webhook_id, 'aria-labelledby': heading },
    h(
      'header',
      {},
      h('h3', { id: heading, class: 'webhook-url' }, w.url),
      h(
        'span',
        { class: `status ${w.enabled ? 'status-approved' : 'status-denied'}` },
        w.enabled ? 'enabled' : 'disabled',
      ),
    ),
    h(
      'dl',
      { class: 'facts' },
      fact('Id', w.webhook_id),
      fact('Events', w.events.join(', ')),
      w.description && fact('Description', w.description),
      fact('Registered', when(w.created_at)),
      fact('Secret issued', when(w.secret_issued_at)),
    ),
    deliveries.length === 0
      ? h('p', { class: 'empty' }, 'Nothing has been sent to it yet.')
      : h(
          'div',
          { class: 'table-scroll', role: 'region', 'aria-label': `Deliveries to ${w.url}`, tabindex: 0 },
          h(
            'table',
            { class: 'deliveries' },
            h(
              'thead',
              {},
              h(
                'tr',
                {},
                ['Event', 'Approval', 'Status', 'Attempts', 'Last answer', 'Next attempt', 'Delivered'].map((c) =>
                  h('th', { scope: 'col' }, c),
                ),
              ),
            ),
            h(
              'tbody',
              {},
              deliveries.map((d) =>
                h(
                  'tr',
                  { class: 'delivery', 'data-delivery-id': d.delivery_id, 'data-status': d.status },
                  h('td', {}, d.event),
                  h('td', {}, h('a', { href: `#/calls/${encodeURIComponent(d.call_id)}` }, d.approval_id)),
                  h('td', {}, h('span', { class: `status status-${statusClass(d.status)}` }, d.status)),
                  h('td', { class: 'attempts' }, String(d.attempts)),
                  h('td', { class: 'last-answer' }, lastAnswer(d)),
                  h('td', {}, d.next_attempt_at ? when(d.next_attempt_at) : '—'),
                  h('td', {}, d.delivered_at ? when(d.delivered_at) : '—'),
                ),
              ),
            ),
          ),
        ),
  );
}

/** `HTTP 503 (…)`, the error when there was no answer, or `—` before the first attempt. */
function lastAnswer(d) {
  if (d.last_status_code !== null) {
    const http = `HTTP ${d.last_status_code}`;
    return d.last_error && d.last_error !== http ? `${http} (${d.last_error})` : http;
  }
  return d.last_error ?? '—';
}

/** The inbox's status colours: delivered as approved, failed as denied, pending as pending. */
function statusClass(status) {
  return { delivered: 'approved', failed: 'denied', pending: 'pending' }[status] ?? 'pending';
}

function fact(term, value) {
  return [h('dt', {}, term), h('dd', {}, value)];
}

/** The link to the view, shown only to those who may open it. */
export function webhooksLink(me) {
  const link = document.getElementById('webhooks-link');
  if (link) link.hidden = !managesWebhooks(me);
}
