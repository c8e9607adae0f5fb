/**
 * The owners' approvals console, in a real browser (Debian's Chromium, driven by playwright-core) against the
 * approvals service running in-process on real NATS and Postgres. Calls are staged on the log as policy stages them;
 * everything the page shows arrives through its live stream. Screenshots go to `test-output/console/`.
 */
import { mkdirSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import type { CallOriginV1, JsonValue } from '@ormuz/contracts';
import { bearerFor, launchBrowser, submitSeededCall, testToken, waitFor } from '@ormuz/testing';
import { deriveCallId } from '@ormuz/tool-call';
import { ApprovalsUnderTest } from './approvals-under-test.js';

const SHOTS = fileURLToPath(new URL('../../../test-output/console/', import.meta.url));
const TENANT = 'acme';

interface Staging {
  readonly args?: Record<string, JsonValue>;
  readonly summary?: string;
  readonly agent?: string;
  readonly device?: string;
  readonly reasons?: string[];
  readonly expiresInMs?: number;
}

describe('the approvals console', () => {
  const app = new ApprovalsUnderTest('console', {
    // Expiry is observed, not waited out: the sweeper looks every 100 ms.
    APPROVAL_SWEEP_MS: '100',
    // The Webhooks view's test delivers to a receiver on 127.0.0.1.
    WEBHOOK_POLL_MS: '50',
    ORMUZ_WEBHOOKS_ALLOW_PRIVATE: 'true',
  });
  let url: string;
  let browser: Browser;
  /** What the webhook receiver got: the event type of each POST. */
  const hooksReceived: string[] = [];
  let receiver: Server;
  let receiverUrl: string;
  let alice: string;

  /** Stages a high-risk call as policy would; the page learns of it only through its stream. */
  async function stage(operationId: string, s: Staging = {}): Promise<{ callId: string; approvalId: string }> {
    const origin: CallOriginV1 = { kind: 'operation', operation_id: operationId };
    const callId = deriveCallId(TENANT, origin);
    const approvalId = `apr_${callId.slice(5)}`;
    const cause = { correlationid: operationId, causationid: `c-${operationId}` };
    await submitSeededCall(
      app.policy,
      {
        tenant: TENANT,
        callId,
        tool: 'device.send_message',
        args: s.args ?? { recipient: 'Alice', message_body: 'hi' },
        origin,
        agentId: s.agent,
        deviceId: s.device,
      },
      cause,
    );
    await app.policy.execute(
      TENANT,
      callId,
      {
        type: 'StageCall',
        data: {
          call_id: callId,
          approval_id: approvalId,
          summary: s.summary ?? `Send a text message (${operationId})`,
          expires_at: new Date(Date.now() + (s.expiresInMs ?? 10 * 60_000)).toISOString(),
          verdict: { level: 'high', reasons: s.reasons ?? ['sends a message'] },
        },
      },
      { ...cause, causationid: `s-${operationId}` },
    );
    return { callId, approvalId };
  }

  async function approval(approvalId: string) {
    const res = await fetch(`${url}/v1/tenants/${TENANT}/approvals?status=all`, {
      headers: { authorization: `Bearer ${(await bearerFor(TENANT)).bearer}` },
    });
    const { approvals } = (await res.json()) as {
      approvals: { approval_id: string; status: string; decided_by: string | null }[];
    };
    return approvals.find((a) => a.approval_id === approvalId);
  }
  const statusOf = async (approvalId: string) => (await approval(approvalId))?.status;

  async function newPage(
    options: { viewport?: { width: number; height: number } } = {},
  ): Promise<{ context: BrowserContext; page: Page }> {
    const context = await browser.newContext({ viewport: options.viewport ?? { width: 1280, height: 900 } });
    const page = await context.newPage();
    return { context, page };
  }

  /** Opens the console and signs in with `token`; resolves once the first snapshot has been drawn. */
  async function signIn(page: Page, token = alice): Promise<void> {
    await page.goto(`${url}/console`);
    await page.getByLabel('Bearer token').fill(token);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.locator('#live[data-state="live"]').waitFor();
    await page.locator('#approvals[aria-busy="false"]').waitFor({ state: 'attached' });
  }

  const cardOf = (page: Page, approvalId: string) => page.locator(`.approval[data-approval-id="${approvalId}"]`);
  const shot = (page: Page, name: string, fullPage = true) =>
    page.screenshot({ path: `${SHOTS}${name}.png`, fullPage });

  beforeAll(async () => {
    mkdirSync(SHOTS, { recursive: true });
    await app.open();
    url = app.url;
    receiver = createServer((req, res) => {
      hooksReceived.push(String(req.headers['ormuz-event-type']));
      req.resume().on('end', () => res.writeHead(204).end());
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
    alice = await testToken({ tenant: TENANT, roles: ['owner'], subject: 'alice@acme' });
    browser = await launchBrowser();
  });

  afterAll(async () => {
    await browser?.close();
    await app.close();
    receiver?.closeAllConnections();
    await new Promise((resolve) => receiver?.close(resolve));
  });

  describe('over HTTP', () => {
    it('serves the page and its files with a policy that runs only its own scripts', async () => {
      const page = await fetch(`${url}/console`);
      expect(page.status).toBe(200);
      expect(page.headers.get('content-type')).toContain('text/html');
      expect(page.headers.get('content-security-policy')).toContain("script-src 'self'");
      expect(await page.text()).toContain('/console/console.js');
      for (const file of [
        'console.js',
        'sse.js',
        'timeline.js',
        'dom.js',
        'webhooks.js',
        'oidc.js',
        'console.css',
        'webhooks.css',
      ]) {
        expect((await fetch(`${url}/console/${file}`)).status).toBe(200);
      }
      // No identity provider configured: only pasted tokens, and the page talks to this service only.
      expect(await (await fetch(`${url}/console/oidc/config`)).json()).toEqual({ enabled: false });
      expect(page.headers.get('content-security-policy')).toContain("connect-src 'self';");
      expect((await fetch(`${url}/console/..%2Fconsole.module.ts`)).status).toBe(404);
      expect((await fetch(`${url}/console/package.json`)).status).toBe(404);
    });

    it('refuses the live stream without a credential (401) and to another tenant (403)', async () => {
      const anonymous = await fetch(`${url}/v1/tenants/${TENANT}/approvals/stream`);
      expect(anonymous.status).toBe(401);
      const globex = await fetch(`${url}/v1/tenants/${TENANT}/approvals/stream`, {
        headers: { authorization: `Bearer ${(await bearerFor('globex', ['owner'])).bearer}` },
      });
      expect(globex.status).toBe(403);
    });

    it("streams to an owner of named agents only their agents' approvals", async () => {
      const carol = await testToken({ tenant: TENANT, roles: ['owner'], subject: 'carol@acme', agents: ['agent-2'] });
      const controller = new AbortController();
      const res = await fetch(`${url}/v1/tenants/${TENANT}/approvals/stream`, {
        headers: { authorization: `Bearer ${carol}` },
        signal: controller.signal,
      });
      expect(res.headers.get('content-type')).toContain('text/event-stream');
      const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
      let text = '';
      const until = async (found: (t: string) => boolean) => {
        while (!found(text)) text += (await reader.read()).value ?? '';
      };
      await until((t) => t.includes('event: snapshot'));
      const other = await stage('op-stream-other', { agent: 'agent-1' });
      const mine = await stage('op-stream-mine', { agent: 'agent-2' });
      await until((t) => t.includes(mine.approvalId));
      controller.abort();
      expect(text).not.toContain(other.approvalId);
      expect(text).toMatch(new RegExp(`event: approval\\ndata: \\{[^\\n]*"approval_id":"${mine.approvalId}"`));
    });

    it('ends the stream when the token that opened it expires, saying so', async () => {
      const brief = await testToken({ tenant: TENANT, roles: ['owner'], subject: 'alice@acme', ttlSeconds: 2 });
      const res = await fetch(`${url}/v1/tenants/${TENANT}/approvals/stream`, {
        headers: { authorization: `Bearer ${brief}` },
      });
      expect(res.status).toBe(200);
      // The body ends (the server closes the stream) right after the `end` event.
      const text = await res.text();
      expect(text).toContain('event: snapshot');
      expect(text).toMatch(/event: end\ndata: \{"reason":"token_expired"/);
    });

    it('refuses a forged cross-site form POST: 401 without the header, 403 with a foreign Origin; nothing is decided', async () => {
      const { approvalId } = await staged('op-csrf');
      const form = await fetch(`${url}/v1/tenants/${TENANT}/approvals/${approvalId}/approve`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: 'reason=please',
      });
      expect(form.status).toBe(401);
      // Even a request that somehow carries a valid token is refused when a page of another origin sent it.
      for (const origin of ['https://evil.example', 'null', `${url}.evil.example`]) {
        const foreign = await fetch(`${url}/v1/tenants/${TENANT}/approvals/${approvalId}/approve`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', origin, authorization: `Bearer ${alice}` },
          body: '{}',
        });
        expect(foreign.status).toBe(403);
        expect(((await foreign.json()) as { error: { code: string } }).error.code).toBe('forbidden');
      }
      expect(await statusOf(approvalId)).toBe('pending');
      const own = await fetch(`${url}/v1/tenants/${TENANT}/approvals/${approvalId}/deny`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', origin: url, authorization: `Bearer ${alice}` },
        body: '{}',
      });
      expect(own.status).toBe(200);
    });

    it("forwards the caller's bearer for a call's timeline and audit row, and refuses without one", async () => {
      const { callId } = await staged('op-forward');
      for (const path of [`calls/${callId}?timeline=true`, `audit/calls/${callId}`, 'conversations/conv-1']) {
        expect((await fetch(`${url}/v1/tenants/${TENANT}/${path}`)).status).toBe(401);
        // Policy, audit and model-loop do not run in this test: the request reaches NATS and nobody answers.
        const res = await fetch(`${url}/v1/tenants/${TENANT}/${path}`, {
          headers: { authorization: `Bearer ${alice}` },
        });
        expect(res.status).toBe(503);
        expect(((await res.json()) as { error: { code: string } }).error.code).toBe('service_unavailable');
      }
    });

    it('says who a token names', async () => {
      const res = await fetch(`${url}/v1/whoami`, { headers: { authorization: `Bearer ${alice}` } });
      expect(await res.json()).toEqual({
        kind: 'person',
        subject: 'alice@acme',
        tenant: TENANT,
        roles: ['owner'],
        agents: null,
      });
      expect((await fetch(`${url}/v1/whoami`)).status).toBe(401);
    });
  });

  /** Stages a call and waits until the inbox lists it (for tests that do not watch it arrive). */
  async function staged(operationId: string, s: Staging = {}) {
    const ids = await stage(operationId, s);
    await waitFor(async () => (await statusOf(ids.approvalId)) === 'pending', {
      message: `${ids.approvalId} in the inbox`,
    });
    return ids;
  }

  describe('in a browser', () => {
    let context: BrowserContext;
    let page: Page;
    beforeEach(async () => ({ context, page } = await newPage()));
    afterEach(() => context.close());

    it('signs in with a pasted token, refusing a bad one', async () => {
      await page.goto(`${url}/console`);
      await page.getByLabel('Bearer token').fill('not-a-token');
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.locator('#sign-in-error', { hasText: 'That token was refused' }).waitFor();
      await shot(page, 'sign-in-refused');
      await page.getByLabel('Bearer token').fill(alice);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.locator('#who', { hasText: 'alice@acme · acme' }).waitFor();
      await page.locator('#live[data-state="live"]').waitFor();
      expect(await page.evaluate('sessionStorage.getItem("ormuz.console.token") !== null')).toBe(true);
      // Kept as a header for this tab, never as a cookie.
      expect(await context.cookies()).toEqual([]);
    });

    it('asks to sign in again when the token expires while the inbox is open', async () => {
      const brief = await testToken({ tenant: TENANT, roles: ['owner'], subject: 'alice@acme', ttlSeconds: 4 });
      await page.goto(`${url}/console`);
      await page.getByLabel('Bearer token').fill(brief);
      await page.getByRole('button', { name: 'Sign in' }).click();
      // Only the stream's `end` event says this (a token refused at sign-in is "That token was refused"): the inbox
      // was open, and the page left it when the token expired.
      await page
        .locator('#sign-in-error', { hasText: 'Your token expired: sign in again.' })
        .waitFor({ timeout: 15_000 });
      expect(await page.getByLabel('Bearer token').isVisible()).toBe(true);
      expect(await page.evaluate('sessionStorage.getItem("ormuz.console.token")')).toBeNull();
    });

    it('shows a call staged after the page opened, live, with everything an owner decides on; approves it', async () => {
      await signIn(page);
      const { approvalId } = await stage('op-live', {
        summary: 'Send a text message to Bob: "the code is 4411"',
        args: { recipient: 'Bob', message_body: 'the code is 4411' },
        device: 'phone-7',
        agent: 'agent-9',
        reasons: ['sends a message', 'to a new recipient'],
      });
      const card = cardOf(page, approvalId);
      await card.getByRole('heading', { name: 'Send a text message to Bob: "the code is 4411"' }).waitFor();
      for (const text of ['agent-9', 'phone-7', 'device.send_message', 'sends a message', 'to a new recipient']) {
        await card.getByText(text, { exact: true }).waitFor();
      }
      expect(await card.locator('pre.args').textContent()).toBe(
        JSON.stringify({ message_body: 'the code is 4411', recipient: 'Bob' }, null, 2),
      );
      await card.locator('time.countdown', { hasText: /^in \d+:\d\d$/ }).waitFor();
      await page.locator('#announcer', { hasText: 'New approval' }).waitFor({ state: 'attached' });
      await shot(page, 'inbox-live-arrival');

      await card.getByRole('button', { name: 'Approve' }).click();
      await card.waitFor({ state: 'detached' });
      await waitFor(async () => (await approval(approvalId))?.decided_by === 'alice@acme', {
        message: 'approved by alice',
      });
      // The inbox is a projection of the log: poll it.
      await waitFor(async () => (await statusOf(approvalId)) === 'approved', {
        message: `${approvalId} approved in the inbox`,
      });
    });

    it('denies with a reason that reaches the log, and lists the decision in the history', async () => {
      const { approvalId, callId } = await staged('op-deny', { summary: 'Delete every photo' });
      await signIn(page);
      const card = cardOf(page, approvalId);
      await card.getByRole('button', { name: 'Deny…' }).click();
      const dialog = page.getByRole('dialog', { name: 'Deny this call?' });
      await dialog.waitFor();
      expect(await page.evaluate('document.activeElement?.id')).toBe('deny-reason');
      await page.keyboard.type('Not without asking me first');
      await shot(page, 'deny-with-reason');
      await dialog.getByRole('button', { name: 'Deny' }).click();
      await card.waitFor({ state: 'detached' });
      await waitFor(async () => (await statusOf(approvalId)) === 'denied', { message: 'denied' });
      const denied = (await app.policy.timeline(TENANT, callId)).find(
        (e) => e.event.type === 'ormuz.toolcall.denied.v1',
      );
      expect(denied?.event.data).toMatchObject({ decided_by: 'alice@acme', reason: 'Not without asking me first' });

      await page.getByLabel('State', { exact: true }).selectOption('closed');
      await page.getByRole('heading', { name: 'History' }).waitFor();
      await cardOf(page, approvalId).getByText('denied by alice@acme', { exact: false }).waitFor();
      await shot(page, 'history');
    });

    it('filters by agent, device and risk', async () => {
      const a = await staged('op-filter-a', { agent: 'agent-a', device: 'tablet-1', reasons: ['spends money'] });
      const b = await staged('op-filter-b', { agent: 'agent-b', device: 'phone-2', reasons: ['sends a message'] });
      await signIn(page);
      await cardOf(page, a.approvalId).waitFor();
      await page.getByLabel('Agent', { exact: true }).selectOption('agent-b');
      await cardOf(page, a.approvalId).waitFor({ state: 'detached' });
      await cardOf(page, b.approvalId).waitFor();
      await page.getByLabel('Agent', { exact: true }).selectOption('');
      await page.getByLabel('Device', { exact: true }).selectOption('tablet-1');
      await cardOf(page, b.approvalId).waitFor({ state: 'detached' });
      await cardOf(page, a.approvalId).waitFor();
      await page.getByLabel('Device', { exact: true }).selectOption('');
      await page.getByLabel('Risk', { exact: true }).selectOption('sends a message');
      await cardOf(page, a.approvalId).waitFor({ state: 'detached' });
      await cardOf(page, b.approvalId).waitFor();
    });

    it('shows an approval expire: the sweeper closes it and the page moves it to the history', async () => {
      await signIn(page);
      const { approvalId } = await stage('op-expire', { summary: 'Call the bank', expiresInMs: 1500 });
      const card = cardOf(page, approvalId);
      await card.waitFor();
      await card.waitFor({ state: 'detached' });
      // The inbox is a projection of the log: poll it.
      await waitFor(async () => (await statusOf(approvalId)) === 'expired', {
        message: `${approvalId} expired in the inbox`,
      });
      await page.getByLabel('State', { exact: true }).selectOption('expired');
      await cardOf(page, approvalId).locator('.status', { hasText: 'expired' }).waitFor();
      await shot(page, 'expired');
    });

    it('shows an argument that is markup as text, and runs none of it', async () => {
      const dialogs: string[] = [];
      page.on('dialog', (d) => {
        dialogs.push(d.message());
        void d.dismiss();
      });
      await signIn(page);
      const attack = '<img src=x onerror=alert(1)>';
      const { approvalId } = await stage('op-xss', {
        summary: `Send "<script>alert(2)</script>" to Eve`,
        args: { recipient: 'Eve', message_body: attack },
      });
      const card = cardOf(page, approvalId);
      await card.getByText(attack, { exact: false }).waitFor();
      await card.getByRole('heading', { name: 'Send "<script>alert(2)</script>" to Eve' }).waitFor();
      expect(await card.locator('pre.args').textContent()).toContain(`"message_body": "${attack}"`);
      // No element was made of the text: there is no image whose error could fire, and no script.
      expect(await page.evaluate('document.querySelectorAll("img").length')).toBe(0);
      expect(await page.evaluate('document.querySelectorAll("#approvals script").length')).toBe(0);
      await shot(page, 'xss-as-text');
      expect(dialogs).toEqual([]);
    });

    it('is used from the keyboard: j/k and arrows move, d opens the denial and gives focus back, a approves', async () => {
      const first = await staged('op-key-1', { summary: 'First call', expiresInMs: 5 * 60_000 });
      const second = await staged('op-key-2', { summary: 'Second call', expiresInMs: 6 * 60_000 });
      await signIn(page);
      const hasFocus = (approvalId: string) =>
        page.locator(`.approval[data-approval-id="${approvalId}"]:focus`).waitFor();
      // Focus starts on the first approval (the one that expires first).
      await hasFocus(first.approvalId);
      await page.keyboard.press('j');
      await hasFocus(second.approvalId);
      await page.keyboard.press('k');
      await hasFocus(first.approvalId);
      await page.keyboard.press('ArrowDown');
      await hasFocus(second.approvalId);

      await page.keyboard.press('d');
      await page.getByRole('dialog', { name: 'Deny this call?' }).waitFor();
      expect(await page.evaluate('document.activeElement?.id')).toBe('deny-reason');
      await page.keyboard.press('Escape');
      await page.getByRole('dialog').waitFor({ state: 'hidden' });
      await hasFocus(second.approvalId);

      await page.keyboard.press('k');
      await hasFocus(first.approvalId);
      await page.keyboard.press('a');
      await cardOf(page, first.approvalId).waitFor({ state: 'detached' });
      await waitFor(async () => (await statusOf(first.approvalId)) === 'approved', { message: 'approved by key' });
      // Focus moves on to the approval that took its place.
      await hasFocus(second.approvalId);
      expect(await statusOf(second.approvalId)).toBe('pending');
      await shot(page, 'keyboard');
    });

    it('keeps the approval pending when another site posts a form to it, even while the owner is signed in', async () => {
      const { approvalId } = await staged('op-csrf-browser');
      await signIn(page);
      const attacker: Server = createServer((_req, res) => {
        res.writeHead(200, { 'content-type': 'text/html' });
        res.end(
          `<form id="f" method="POST" action="${url}/v1/tenants/${TENANT}/approvals/${approvalId}/approve">` +
            '<input name="reason" value="x"></form><script>document.getElementById("f").submit()</script>',
        );
      });
      await new Promise<void>((resolve) => attacker.listen(0, '127.0.0.1', resolve));
      try {
        const evil = `http://localhost:${(attacker.address() as AddressInfo).port}/`;
        const answered = page.waitForResponse((r) => r.url().endsWith(`/${approvalId}/approve`));
        await page.goto(evil);
        const response = await answered;
        expect(response.status()).toBe(403);
        expect(response.request().headers()['authorization']).toBeUndefined();
        expect(await statusOf(approvalId)).toBe('pending');
      } finally {
        await new Promise((resolve) => attacker.close(resolve));
      }
    });
  });

  describe('the Webhooks view', () => {
    it('shows an operator each endpoint and its delivery log, updated on Refresh; owners are told it is not theirs', async () => {
      const olga = await testToken({ tenant: TENANT, roles: ['operator'], subject: 'olga@acme' });
      const description = '<img src=x onerror=alert(1)> pager';
      const registered = await fetch(`${url}/v1/tenants/${TENANT}/webhooks`, {
        method: 'POST',
        headers: { authorization: `Bearer ${olga}`, 'content-type': 'application/json' },
        body: JSON.stringify({ url: `${receiverUrl}/console-hook`, events: ['staged'], description }),
      });
      expect(registered.status).toBe(200);
      const { webhook } = (await registered.json()) as { webhook: { webhook_id: string } };

      const { context, page } = await newPage();
      try {
        await signIn(page, olga);
        await page.getByRole('link', { name: 'Webhooks' }).click();
        const endpoint = page.locator(`.webhook[data-webhook-id="${webhook.webhook_id}"]`);
        await endpoint.getByText('Nothing has been sent to it yet.').waitFor();
        // Shown as the text it is: no element was made from it.
        await endpoint.getByText(description, { exact: true }).waitFor();
        expect(await endpoint.locator('img').count()).toBe(0);

        const { approvalId } = await stage('op-webhook-view', { summary: 'Send a text message (webhook view)' });
        await waitFor(() => hooksReceived.includes('approval.staged'), { message: 'the receiver to get the webhook' });
        // The view is read on opening and on Refresh, never live: refresh until the log shows the delivery done.
        const row = endpoint.locator('tr.delivery[data-status="delivered"]');
        await waitFor(
          async () => {
            await page.getByRole('button', { name: 'Refresh' }).click();
            await page.locator('#webhooks-list[aria-busy="false"]').waitFor();
            return (await row.count()) === 1;
          },
          { message: 'the delivered row after a refresh' },
        );
        const cells = await row.locator('td').allTextContents();
        expect(cells.slice(0, 5)).toEqual(['staged', approvalId, 'delivered', '1', 'HTTP 204']);
        expect(cells[5]).toBe('—');
        expect(cells[6]).not.toBe('—');
        await shot(page, 'webhooks-delivery-log');

        // Reopened: read again.
        await page.getByRole('link', { name: '← Back to the inbox' }).click();
        await page.locator('#inbox-view').waitFor();
        await page.getByRole('link', { name: 'Webhooks' }).click();
        await endpoint.locator('tr.delivery[data-status="delivered"]').waitFor();
      } finally {
        await context.close();
      }

      // An owner (alice) is not offered the link, and is told why if she opens the view anyway.
      const owner = await newPage();
      try {
        await signIn(owner.page);
        expect(await owner.page.locator('#webhooks-link').isHidden()).toBe(true);
        await owner.page.goto(`${url}/console#/webhooks`);
        await owner.page
          .locator('#webhooks-not-allowed', { hasText: "managed by the tenant's operators and administrators" })
          .waitFor();
        expect(await owner.page.locator('#webhooks-not-allowed').textContent()).toContain('alice@acme (owner)');
        await shot(owner.page, 'webhooks-not-for-owners');
      } finally {
        await owner.context.close();
      }
    });
  });

  describe('on a phone (390×844)', () => {
    it('fits the screen: no sideways scrolling, buttons large enough to tap', async () => {
      const { context, page } = await newPage({ viewport: { width: 390, height: 844 } });
      try {
        await signIn(page);
        const { approvalId } = await stage('op-phone', {
          summary: 'Send a long message to a recipient with a rather long name',
          args: {
            recipient: 'Maximilian Alexander von Oberhausen-Wittgenstein',
            message_body: 'x'.repeat(300),
            unbroken: 'https://example.com/'.concat('a'.repeat(200)),
          },
        });
        const card = cardOf(page, approvalId);
        await card.waitFor();
        expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(390);
        for (const name of ['Approve', 'Deny…']) {
          const box = await card.getByRole('button', { name }).boundingBox();
          expect(box!.height).toBeGreaterThanOrEqual(44);
          expect(box!.x + box!.width).toBeLessThanOrEqual(390);
        }
        await shot(page, 'phone-inbox', false);
        await card.getByRole('button', { name: 'Approve' }).click();
        await card.waitFor({ state: 'detached' });
        // The inbox is a projection of the log: poll it.
        await waitFor(async () => (await statusOf(approvalId)) === 'approved', {
          message: `${approvalId} approved in the inbox`,
        });
      } finally {
        await context.close();
      }
    });
  });
});
