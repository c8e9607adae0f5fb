/**
 * The approvals console's call detail on the whole platform: the five services as processes, a simulated phone and
 * the scripted demo agent. The owner approves the staged call in the console (Debian's Chromium, driven by
 * playwright-core), then opens its detail: the timeline drawn from policy's log (a lane per service, the wait for the
 * owner marked), the audit service's row, and the link to the conversation turn the call came from, and back. The
 * detail's data comes through the approvals service, which forwards the owner's own bearer token to policy, audit
 * and model-loop. Screenshots go to `test-output/console/`.
 */
import { jest } from '@jest/globals';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { callService, type ServiceHealth } from '@ormuz/service-kit';
import { launchBrowser, testToken, waitFor } from '@ormuz/testing';
import { ROOT } from './support/processes.js';
import { startPlatform, type Platform } from './support/platform.js';

jest.setTimeout(180_000);

const SHOTS = join(ROOT, 'test-output', 'console');

describe('the approvals console on the whole platform', () => {
  let platform: Platform;
  let browser: Browser;
  let url: string;

  beforeAll(async () => {
    mkdirSync(SHOTS, { recursive: true });
    platform = await startPlatform();
    const health = await callService<ServiceHealth>(platform.nc, platform.namespace, 'approvals', 'health', {});
    url = health.endpoints.http!;
    browser = await launchBrowser();
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await platform?.close();
  }, 60_000);

  it("draws an approved call's timeline, shows its audit row, and links it with its conversation turn", async () => {
    const { tenant } = platform;
    const { conversation_id: conversationId } = await platform.call('model-loop.start', {
      tenant,
      agent_id: 'demo-agent',
      task: 'Tell Alice I am running ten minutes late.',
      device_id: 'phone-1',
      model: 'scripted:demo',
    });
    const conversation = () => platform.call('model-loop.get', { tenant, conversation_id: conversationId });
    const [pending] = (
      await waitFor(
        async () => {
          const view = await conversation();
          return view.pending.length ? view : undefined;
        },
        {
          timeoutMs: 30_000,
          message: 'the conversation to wait for the owner',
        },
      )
    ).pending;

    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    try {
      const page = await context.newPage();
      await page.goto(`${url}/console`);
      await page
        .getByLabel('Bearer token')
        .fill(await testToken({ tenant, roles: ['owner'], subject: `owner@${tenant}` }));
      await page.getByRole('button', { name: 'Sign in' }).click();
      const card = page.locator(`.approval[data-approval-id="${pending!.approval_id}"]`);
      await card.getByRole('button', { name: 'Approve' }).click();
      await card.waitFor({ state: 'detached' });
      await waitFor(async () => (await conversation()).status === 'completed', {
        timeoutMs: 30_000,
        message: 'the conversation to complete',
      });

      await page.getByLabel('State', { exact: true }).selectOption('approved');
      await card.getByRole('link', { name: 'Details' }).click();
      await page.getByRole('heading', { name: pending!.summary }).waitFor();

      // The timeline: a lane per service that recorded an event, the events in log order, the owner's wait marked.
      const svg = page.getByRole('img', { name: `Events of call ${pending!.call_id}` });
      await svg.waitFor();
      const lanes = await svg.locator('g.lane').evaluateAll((gs) => gs.map((g) => g.getAttribute('data-lane')));
      expect(lanes).toEqual(expect.arrayContaining(['policy', 'approvals', 'device-bridge']));
      const events = await svg.locator('g.event').evaluateAll((gs) => gs.map((g) => g.getAttribute('data-type')));
      expect(events.slice(0, 3)).toEqual(['requested', 'staged', 'approved']);
      expect(events.at(-1)).toBe('succeeded');
      await svg.locator('g.span[data-span="waited for the owner"]').waitFor();
      await svg.locator('g.span[data-span="ran"]').waitFor();

      // The audit row, read by the audit service for the owner's token.
      const audit = page.locator('table.audit');
      await audit.locator('tr', { hasText: 'decided_by' }).getByText(`owner@${tenant}`).waitFor();
      await audit.locator('tr', { hasText: 'approval_outcome' }).getByText('approved').waitFor();
      await page.screenshot({ path: join(SHOTS, 'call-detail.png'), fullPage: true });

      // To the conversation turn the call came from, and back.
      await page
        .getByRole('link', { name: new RegExp(`^Conversation ${conversationId}, turn \\d+, request \\d+$`) })
        .click();
      await page.getByRole('heading', { name: `Conversation ${conversationId}` }).waitFor();
      const turn = page.locator('.message[aria-current="true"]').first();
      await turn.waitFor();
      await page.screenshot({ path: join(SHOTS, 'conversation.png'), fullPage: true });
      await page.locator(`.message a[href="#/calls/${pending!.call_id}"]`).first().click();
      await page.getByRole('img', { name: `Events of call ${pending!.call_id}` }).waitFor();
    } finally {
      await context.close();
    }
  });
});
