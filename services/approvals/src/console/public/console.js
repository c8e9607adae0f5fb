/* global document, window, sessionStorage, fetch, location, URLSearchParams, AbortController, CSS */
// The owners' approvals console: sign in with a bearer token, watch the inbox live, approve or deny, look into a call.
//
// The token is kept in sessionStorage (this tab only, gone when it closes) and sent as an `Authorization` header on
// every request, never as a cookie. A browser attaches cookies to requests other sites make; it never attaches this
// header. So another site's page cannot act as the signed-in owner (no cross-site request forgery), and the service
// also refuses any state-changing request whose Origin is not its own.
import { countdown, fill, h, when } from './dom.js';
import { completeProviderSignIn, offerProviderSignIn } from './oidc.js';
import { readEventStream, StreamRefused } from './sse.js';
import { drawTimeline, timelineList } from './timeline.js';
import { showWebhooks, webhooksLink } from './webhooks.js';

const TOKEN_KEY = 'ormuz.console.token';
const $ = (selector) => document.querySelector(selector);

const state = {
  token: null,
  me: null,
  /** approval_id → ApprovalViewV1, as the stream last sent it. */
  approvals: new Map(),
  /** True once the first snapshot arrived: later arrivals are announced. */
  loaded: false,
  selectedId: null,
  filters: { state: 'pending', agent: '', device: '', risk: '' },
  stream: null,
  /** The approval the deny dialog is open for. */
  denying: null,
};

class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Talking to the service
// ---------------------------------------------------------------------------------------------------------------

function authHeaders(token = state.token) {
  return { authorization: `Bearer ${token}` };
}

async function api(path, { method = 'GET', body, token } = {}) {
  const res = await fetch(path, {
    method,
    headers: { ...authHeaders(token), ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
    cache: 'no-store',
  });
  const data = await res.json().catch(() => null);
  if (!res.ok) {
    const error = data?.error ?? {};
    throw new ApiError(res.status, error.code ?? 'http_error', error.message ?? `The service answered ${res.status}.`);
  }
  return data;
}

const tenantPath = () => `/v1/tenants/${encodeURIComponent(state.me.tenant)}`;

// ---------------------------------------------------------------------------------------------------------------
// Signing in and out
// ---------------------------------------------------------------------------------------------------------------

async function signIn(token) {
  const me = await api('/v1/whoami', { token });
  state.token = token;
  state.me = me;
  sessionStorage.setItem(TOKEN_KEY, token);
  fill($('#who'), `${me.subject} · ${me.tenant}`, me.roles.length ? ` · ${me.roles.join(', ')}` : '');
  $('#who').hidden = false;
  $('#sign-out').hidden = false;
  startStream();
  route();
}

function signOut(message = '') {
  state.stream?.abort();
  state.stream = null;
  state.token = null;
  state.me = null;
  state.approvals.clear();
  state.loaded = false;
  state.selectedId = null;
  sessionStorage.removeItem(TOKEN_KEY);
  $('#who').hidden = true;
  $('#sign-out').hidden = true;
  setLive('offline');
  $('#sign-in-error').textContent = message;
  $('#token').value = '';
  show('sign-in-view');
  $('#token').focus();
}

async function onSignIn(event) {
  event.preventDefault();
  const token = $('#token')
    .value.trim()
    .replace(/^Bearer\s+/i, '');
  if (!token) {
    $('#sign-in-error').textContent = 'Paste a token first.';
    $('#token').focus();
    return;
  }
  $('#sign-in-error').textContent = '';
  try {
    await signIn(token);
  } catch (err) {
    $('#sign-in-error').textContent = `That token was refused: ${err.message}`;
    $('#token').focus();
  }
}

// ---------------------------------------------------------------------------------------------------------------
// The live inbox
// ---------------------------------------------------------------------------------------------------------------

function startStream() {
  const controller = new AbortController();
  state.stream = controller;
  readEventStream({
    url: `${tenantPath()}/approvals/stream`,
    headers: authHeaders(),
    signal: controller.signal,
    onState: setLive,
    onEvent: (name, data) => {
      const first = !state.loaded;
      if (name === 'snapshot') {
        state.approvals = new Map(data.approvals.map((a) => [a.approval_id, a]));
        state.loaded = true;
      } else if (name === 'approval') {
        upsert(data);
      }
      renderInbox();
      // Once the inbox has loaded, keyboard users start on its first approval (unless they went somewhere else).
      const idle = [document.body, $('#main'), $('#inbox-title')].includes(document.activeElement);
      if (first && state.loaded && idle && !$('#inbox-view').hidden) focusSelected();
    },
  }).catch((err) => {
    if (state.stream !== controller) return;
    signOut(err instanceof StreamRefused ? err.message : `The live inbox failed: ${err.message}`);
  });
}

function upsert(approval) {
  const known = state.approvals.get(approval.approval_id);
  // A decision's own answer and the stream both bring the closed row; never let an older one win.
  if (known && known.status !== 'pending' && approval.status === 'pending') return;
  state.approvals.set(approval.approval_id, approval);
  if (!known && state.loaded && approval.status === 'pending') announce(`New approval: ${approval.summary}`);
}

function setLive(which) {
  const live = $('#live');
  live.dataset.state = which;
  live.textContent = { connecting: 'Connecting…', live: 'Live', retrying: 'Reconnecting…', offline: 'Offline' }[which];
}

function matches(a) {
  const f = state.filters;
  const byState = f.state === 'all' || (f.state === 'closed' ? a.status !== 'pending' : a.status === f.state);
  return (
    byState &&
    (!f.agent || a.agent_id === f.agent) &&
    (!f.device || a.device_id === f.device) &&
    (!f.risk || a.risk_reasons.includes(f.risk))
  );
}

function visibleApprovals() {
  const list = [...state.approvals.values()].filter(matches);
  const closedAt = (a) => a.decided_at ?? a.expires_at;
  return list.sort((a, b) => {
    if ((a.status === 'pending') !== (b.status === 'pending')) return a.status === 'pending' ? -1 : 1;
    // Pending: the one that expires first on top. Closed: the most recent first.
    return a.status === 'pending' ? a.expires_at.localeCompare(b.expires_at) : closedAt(b).localeCompare(closedAt(a));
  });
}

function renderFilterOptions() {
  const all = [...state.approvals.values()];
  const options = (select, values, allLabel) => {
    const current = select.value;
    const sorted = [...new Set(values.filter((v) => v !== null && v !== undefined))].sort();
    fill(
      select,
      h('option', { value: '' }, allLabel),
      sorted.map((v) => h('option', { value: v }, v)),
    );
    select.value = sorted.includes(current) ? current : '';
  };
  options(
    $('#filter-agent'),
    all.map((a) => a.agent_id),
    'All agents',
  );
  options(
    $('#filter-device'),
    all.map((a) => a.device_id),
    'All devices',
  );
  options(
    $('#filter-risk'),
    all.flatMap((a) => a.risk_reasons),
    'Any risk',
  );
  state.filters.agent = $('#filter-agent').value;
  state.filters.device = $('#filter-device').value;
  state.filters.risk = $('#filter-risk').value;
}

function renderInbox() {
  if (!state.me) return;
  renderFilterOptions();
  const list = $('#approvals');
  const focusWasInList = list.contains(document.activeElement);
  const previous = [...list.querySelectorAll('.approval')].map((el) => el.dataset.approvalId);
  const visible = visibleApprovals();
  const ids = visible.map((a) => a.approval_id);
  if (!ids.includes(state.selectedId)) {
    // The selected approval left the list (decided, filtered out): select the one that took its place.
    const at = Math.max(0, previous.indexOf(state.selectedId));
    state.selectedId = ids[Math.min(at, ids.length - 1)] ?? null;
  }
  fill(
    list,
    visible.map((a) => h('li', {}, card(a))),
  );
  list.setAttribute('aria-busy', String(!state.loaded));
  $('#empty').hidden = visible.length > 0;
  $('#empty').textContent = state.loaded ? 'Nothing here.' : 'Loading…';
  $('#inbox-title').textContent = state.filters.state === 'pending' ? 'Pending approvals' : 'History';
  const pending = [...state.approvals.values()].filter((a) => a.status === 'pending').length;
  $('#count').textContent = `${visible.length} shown · ${pending} pending`;
  document.title = pending ? `(${pending}) Ormuz approvals` : 'Ormuz approvals';
  tick();
  if (focusWasInList) focusSelected();
}

function card(a) {
  const id = a.approval_id;
  const selected = id === state.selectedId;
  const pending = a.status === 'pending';
  return h(
    'article',
    {
      class: 'approval',
      'data-approval-id': id,
      'data-status': a.status,
      tabindex: selected ? 0 : -1,
      'aria-current': selected ? 'true' : false,
      'aria-labelledby': `summary-${id}`,
      onfocus: () => select(id),
      onclick: () => select(id),
    },
    h(
      'header',
      {},
      h('h3', { id: `summary-${id}`, class: 'summary' }, a.summary),
      h('span', { class: `status status-${a.status}` }, a.status),
    ),
    h(
      'dl',
      { class: 'facts' },
      fact('Agent', a.agent_id ?? 'unknown'),
      fact('Device', a.device_id ?? 'none'),
      fact('Tool', a.tool),
      fact(
        'Risk',
        h(
          'ul',
          { class: 'reasons' },
          a.risk_reasons.map((r) => h('li', {}, r)),
        ),
      ),
      pending
        ? fact('Expires', h('time', { class: 'countdown', datetime: a.expires_at, 'data-expires': a.expires_at }))
        : fact(
            a.status === 'expired' ? 'Expired' : 'Decided',
            a.decided_by
              ? `${a.status} by ${a.decided_by}, ${when(a.decided_at)}`
              : `${a.status}, ${when(a.decided_at)}`,
          ),
    ),
    h('p', { class: 'args-label', id: `args-${id}` }, 'Arguments (exactly what runs)'),
    h(
      'pre',
      { class: 'args', 'aria-labelledby': `args-${id}`, tabindex: -1 },
      a.arguments === null ? 'not recorded' : JSON.stringify(a.arguments, null, 2),
    ),
    h(
      'div',
      { class: 'actions' },
      pending && h('button', { type: 'button', class: 'approve', onclick: () => approve(id) }, 'Approve'),
      pending && h('button', { type: 'button', class: 'deny', onclick: () => openDeny(id) }, 'Deny…'),
      h('a', { href: `#/calls/${encodeURIComponent(a.call_id)}`, class: 'details' }, 'Details'),
    ),
  );
}

function fact(term, value) {
  return [h('dt', {}, term), h('dd', {}, value)];
}

/** Updates the countdowns every second; an approval past its expiry waits for the service to close it. */
function tick() {
  const now = Date.now();
  for (const el of document.querySelectorAll('time.countdown')) {
    const until = new Date(el.dataset.expires).getTime();
    el.textContent = until > now ? countdown(until, now) : `passed ${countdown(until, now)}; closing`;
    el.classList.toggle('soon', until - now < 60_000);
  }
}

function select(id) {
  if (state.selectedId === id) return;
  state.selectedId = id;
  for (const el of document.querySelectorAll('#approvals .approval')) {
    const on = el.dataset.approvalId === id;
    el.tabIndex = on ? 0 : -1;
    if (on) el.setAttribute('aria-current', 'true');
    else el.removeAttribute('aria-current');
  }
}

function focusSelected() {
  const el = document.querySelector(`#approvals .approval[data-approval-id="${CSS.escape(state.selectedId ?? '')}"]`);
  if (el) {
    el.focus();
    el.scrollIntoView({ block: 'nearest' });
  } else {
    $('#inbox-title').focus();
  }
}

function move(delta) {
  const ids = [...document.querySelectorAll('#approvals .approval')].map((el) => el.dataset.approvalId);
  if (ids.length === 0) return;
  const at = ids.indexOf(state.selectedId);
  const next = at < 0 ? 0 : Math.min(ids.length - 1, Math.max(0, at + delta));
  select(ids[next]);
  focusSelected();
}

// ---------------------------------------------------------------------------------------------------------------
// Deciding
// ---------------------------------------------------------------------------------------------------------------

async function decide(id, verb, body) {
  const a = state.approvals.get(id);
  const buttons = document.querySelectorAll(`.approval[data-approval-id="${CSS.escape(id)}"] .actions button`);
  for (const b of buttons) b.disabled = true;
  try {
    const decided = await api(`${tenantPath()}/approvals/${encodeURIComponent(id)}/${verb}`, { method: 'POST', body });
    $('#error').textContent = '';
    upsert(decided);
    announce(`${verb === 'approve' ? 'Approved' : 'Denied'}: ${a?.summary ?? id}`);
    renderInbox();
    focusSelected();
  } catch (err) {
    for (const b of buttons) b.disabled = false;
    if (err instanceof ApiError && err.status === 401) return signOut(`Your token was refused: ${err.message}`);
    $('#error').textContent = `Could not ${verb} “${a?.summary ?? id}”: ${err.message}`;
  }
}

function approve(id) {
  if (state.approvals.get(id)?.status !== 'pending') return;
  select(id);
  return decide(id, 'approve', {});
}

function openDeny(id) {
  const a = state.approvals.get(id);
  if (a?.status !== 'pending') return;
  select(id);
  state.denying = id;
  $('#deny-summary').textContent = a.summary;
  $('#deny-reason').value = '';
  $('#deny-dialog').showModal();
  $('#deny-reason').focus();
}

async function onDeny(event) {
  event.preventDefault();
  const id = state.denying;
  const reason = $('#deny-reason').value.trim();
  $('#deny-dialog').close();
  if (id) await decide(id, 'deny', reason ? { reason } : {});
}

function onDenyClosed() {
  // Escape, Cancel or Deny: focus goes back to the approval the dialog was opened from (or the one that replaced it).
  state.denying = null;
  if (!$('#inbox-view').hidden) focusSelected();
}

// ---------------------------------------------------------------------------------------------------------------
// Keyboard
// ---------------------------------------------------------------------------------------------------------------

function onKey(event) {
  if (event.ctrlKey || event.metaKey || event.altKey || $('#inbox-view').hidden || $('#deny-dialog').open) return;
  const target = event.target;
  if (target instanceof window.HTMLElement && target.closest('input, textarea, select, [contenteditable]')) return;
  const selected = state.selectedId;
  switch (event.key) {
    case 'j':
    case 'ArrowDown':
      move(+1);
      break;
    case 'k':
    case 'ArrowUp':
      move(-1);
      break;
    case 'a':
      if (selected) void approve(selected);
      break;
    case 'd':
      if (selected) openDeny(selected);
      break;
    case 'Enter':
      if (!(target instanceof window.HTMLElement && target.classList.contains('approval'))) return;
      location.hash = `#/calls/${encodeURIComponent(state.approvals.get(selected)?.call_id ?? '')}`;
      break;
    default:
      return;
  }
  event.preventDefault();
}

// ---------------------------------------------------------------------------------------------------------------
// Views
// ---------------------------------------------------------------------------------------------------------------

function show(view) {
  for (const id of ['sign-in-view', 'inbox-view', 'detail-view', 'conversation-view', 'webhooks-view'])
    $(`#${id}`).hidden = id !== view;
}

function announce(text) {
  $('#announcer').textContent = text;
}

function route() {
  if (!state.me) return show('sign-in-view');
  const [path, query] = location.hash.replace(/^#/, '').split('?');
  const params = new URLSearchParams(query ?? '');
  const call = /^\/calls\/([^/]+)$/.exec(path ?? '');
  const conversation = /^\/conversations\/([^/]+)$/.exec(path ?? '');
  webhooksLink(state.me);
  if (path === '/webhooks') {
    show('webhooks-view');
    return showWebhooks($('#webhooks-view'), { me: state.me, api, tenantPath: tenantPath() });
  }
  if (call) return showCall(decodeURIComponent(call[1]));
  if (conversation) {
    const turn = params.has('turn') ? Number(params.get('turn')) : null;
    return showConversation(decodeURIComponent(conversation[1]), turn, params.get('call'));
  }
  show('inbox-view');
  renderInbox();
  focusSelected();
}

async function showCall(callId) {
  const view = $('#detail-view');
  show('detail-view');
  fill(view, h('h2', { id: 'detail-title', tabindex: -1 }, `Call ${callId}`), h('p', {}, 'Loading…'));
  const [timeline, audit] = await Promise.allSettled([
    api(`${tenantPath()}/calls/${encodeURIComponent(callId)}?timeline=true`),
    api(`${tenantPath()}/audit/calls/${encodeURIComponent(callId)}`),
  ]);
  const approval = [...state.approvals.values()].find((a) => a.call_id === callId);
  const entries = timeline.status === 'fulfilled' ? (timeline.value.timeline ?? []) : [];
  const row = audit.status === 'fulfilled' ? audit.value : null;
  const origin = row?.origin ?? entries.find((e) => e.type.includes('.requested.'))?.data?.origin ?? null;
  const title = approval?.summary ?? `Call ${callId}`;
  fill(
    view,
    h('p', {}, h('a', { href: '#/' }, '← Back to the inbox')),
    h('h2', { id: 'detail-title', tabindex: -1 }, title),
    h(
      'dl',
      { class: 'facts' },
      fact('Call', callId),
      fact('Tool', approval?.tool ?? row?.tool ?? (timeline.value?.status?.tool || 'unknown')),
      fact('Status', timeline.value?.status?.status ?? row?.status ?? 'unknown'),
      approval && fact('Approval', `${approval.approval_id} (${approval.status})`),
      fact('Origin', originLink(origin, callId)),
    ),
    h(
      'section',
      { 'aria-labelledby': 'timeline-heading' },
      h('h3', { id: 'timeline-heading' }, 'Timeline'),
      timeline.status === 'fulfilled'
        ? [
            h(
              'div',
              { class: 'timeline-scroll', role: 'region', 'aria-label': 'Timeline (scrolls sideways)', tabindex: 0 },
              drawTimeline(entries, `Events of call ${callId}`),
            ),
            h('details', {}, h('summary', {}, 'The events as a list'), timelineList(entries)),
          ]
        : h('p', { class: 'error' }, `The timeline could not be read: ${timeline.reason.message}`),
    ),
    h(
      'section',
      { 'aria-labelledby': 'audit-heading' },
      h('h3', { id: 'audit-heading' }, 'Audit row'),
      row ? auditTable(row) : h('p', { class: 'error' }, `The audit row could not be read: ${audit.reason.message}`),
    ),
  );
  $('#detail-title').focus();
}

function originLink(origin, callId) {
  if (!origin) return 'unknown';
  if (origin.kind === 'conversation') {
    const href = `#/conversations/${encodeURIComponent(origin.conversation_id)}?turn=${origin.turn}&call=${encodeURIComponent(callId)}`;
    return h(
      'a',
      { href, class: 'origin' },
      `Conversation ${origin.conversation_id}, turn ${origin.turn}, request ${origin.index + 1}`,
    );
  }
  return `Direct call, operation ${origin.operation_id}`;
}

function auditTable(row) {
  return h(
    'div',
    { class: 'table-scroll', role: 'region', 'aria-label': 'Audit row', tabindex: 0 },
    h(
      'table',
      { class: 'audit' },
      h(
        'tbody',
        {},
        Object.entries(row).map(([key, value]) =>
          h(
            'tr',
            {},
            h('th', { scope: 'row' }, key),
            h(
              'td',
              {},
              value === null
                ? '—'
                : typeof value === 'object'
                  ? h('pre', {}, JSON.stringify(value, null, 2))
                  : String(value),
            ),
          ),
        ),
      ),
    ),
  );
}

async function showConversation(conversationId, turn, callId) {
  const view = $('#conversation-view');
  show('conversation-view');
  const back = callId
    ? h('a', { href: `#/calls/${encodeURIComponent(callId)}` }, '← Back to the call')
    : h('a', { href: '#/' }, '← Back to the inbox');
  fill(view, h('p', {}, back), h('h2', { id: 'conversation-title', tabindex: -1 }, `Conversation ${conversationId}`));
  let conversation;
  try {
    conversation = await api(`${tenantPath()}/conversations/${encodeURIComponent(conversationId)}`);
  } catch (err) {
    view.append(h('p', { class: 'error' }, `The conversation could not be read: ${err.message}`));
    $('#conversation-title').focus();
    return;
  }
  const byCall = new Map([...state.approvals.values()].map((a) => [a.call_id, a]));
  view.append(
    h('p', {}, `Status: ${conversation.status}`, turn === null ? '' : ` · showing turn ${turn}`),
    h(
      'ol',
      { class: 'messages' },
      conversation.messages.map((m) =>
        h(
          'li',
          {
            class: `message message-${m.role}${m.turn === turn ? ' current' : ''}`,
            'data-turn': m.turn,
            'aria-current': m.turn === turn ? 'true' : false,
          },
          h('p', { class: 'meta' }, `${m.role} · turn ${m.turn}`),
          m.content ? h('p', { class: 'content' }, m.content) : null,
          m.tool_calls
            ? h(
                'ul',
                { class: 'tool-calls' },
                m.tool_calls.map((tc) =>
                  h(
                    'li',
                    {},
                    h('a', { href: `#/calls/${encodeURIComponent(tc.call_id)}` }, tc.name),
                    byCall.has(tc.call_id) ? ` · approval ${byCall.get(tc.call_id).status}` : '',
                  ),
                ),
              )
            : null,
        ),
      ),
    ),
    conversation.final_text ? h('p', { class: 'final' }, `Final answer: ${conversation.final_text}`) : null,
  );
  $('#conversation-title').focus();
  view.querySelector('.message.current')?.scrollIntoView({ block: 'center' });
}

// ---------------------------------------------------------------------------------------------------------------
// Start
// ---------------------------------------------------------------------------------------------------------------

function start() {
  $('#sign-in-form').addEventListener('submit', onSignIn);
  $('#sign-out').addEventListener('click', () => signOut());
  $('#deny-form').addEventListener('submit', onDeny);
  $('#deny-cancel').addEventListener('click', () => $('#deny-dialog').close());
  $('#deny-dialog').addEventListener('close', onDenyClosed);
  $('#filters').addEventListener('submit', (event) => event.preventDefault());
  for (const name of ['state', 'agent', 'device', 'risk']) {
    $(`#filter-${name}`).addEventListener('change', (event) => {
      state.filters[name] = event.target.value;
      renderInbox();
    });
  }
  document.addEventListener('keydown', onKey);
  window.addEventListener('hashchange', route);
  setInterval(tick, 1000);
  offerProviderSignIn($('#sign-in-form'), (message) => ($('#sign-in-error').textContent = message));
  // Back from the identity provider: its token; otherwise the one this tab kept.
  completeProviderSignIn().then(
    (token) => {
      const kept = token ?? sessionStorage.getItem(TOKEN_KEY);
      if (!kept) return signOut();
      signIn(kept).catch((err) => signOut(`Sign in again: ${err.message}`));
    },
    (err) => signOut(err.message),
  );
}

start();
