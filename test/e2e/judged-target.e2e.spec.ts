/**
 * Risk is judged on what the device will really act on: policy, approvals and device-bridge run as processes (as in
 * production), the simulated phone runs in this process so the test can see whether a message really went out. The
 * phone is in the messages app's compose screen with the recipient and text typed; a tap on Send by coordinates, by
 * ref without text, or enter in the field is staged, never run, and the message is not sent. A tap judged on one
 * element is refused by the device when another is under the finger. Once the owner approves the staged tap on Send,
 * it runs and the message really goes out: the test sees harm when there is some.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { NatsConnection } from '@nats-io/transport-node';
import { SIM_PACKAGES, SimulatedDevice, runSimulatedDevice, type SimulatedDeviceHandle } from '@ormuz/device-sdk';
import { connectNats } from '@ormuz/event-log';
import type { CallTimelineEntryV1, RpcName, RpcRequestOf } from '@ormuz/contracts';
import { callRpc } from '@ormuz/service-kit';
import { createTestDatabase, randomNamespace, testEnv, waitFor, type TestDatabase, adminFor } from '@ormuz/testing';
import { killAll, ROOT, spawnTracked, type Tracked } from './support/processes.js';

const TENANT = 'acme';
const DEVICE = 'phone-1';
const TOKEN = `tok-${Math.random().toString(36).slice(2)}`;
const MESSAGES = SIM_PACKAGES.messages;
const FINAL = new Set(['succeeded', 'failed', 'refused', 'staged', 'sealed', 'outcome_unknown']);

/** A timeline entry as `policy.status` answers it; the data of every tool-call event is an object. */
type TimelineEntry = CallTimelineEntryV1 & { readonly data: Record<string, unknown> };

describe('a tap is judged on what is under the finger (policy + bridge + simulated phone)', () => {
  const namespace = randomNamespace();
  let db: TestDatabase;
  let nc: NatsConnection;
  let phone: SimulatedDeviceHandle;
  let journalDir: string;
  const services: Tracked[] = [];
  let op = 0;

  const call = <N extends RpcName>(name: N, body: NoInfer<RpcRequestOf<N>>) =>
    adminFor(body).then((credential) =>
      callRpc(nc, namespace, name, body, { credential, timeoutMs: 10_000, checkReply: true }),
    );
  const submit = (tool: string, args: Record<string, unknown>) =>
    call('policy.submit', {
      tenant: TENANT,
      agent_id: 'agent-1',
      tool,
      arguments: args,
      origin: { kind: 'operation', operation_id: `op-${++op}` },
      device_id: DEVICE,
    });
  const timeline = async (callId: string) => {
    const s = await call('policy.status', { tenant: TENANT, call_id: callId, timeline: true });
    return { status: s.status, timeline: (s.timeline ?? []) as readonly TimelineEntry[] };
  };
  /** Submits and waits until the call reaches a state the test can judge (run, failed, staged or refused). */
  async function settle(tool: string, args: Record<string, unknown>) {
    const r = await submit(tool, args);
    const t = await waitFor(
      async () => {
        const s = await timeline(r.call_id);
        return FINAL.has(s.status.status) && s;
      },
      { timeoutMs: 20_000, message: `${tool} ${JSON.stringify(args)} to settle` },
    );
    return { ...r, status: t.status.status, timeline: t.timeline };
  }
  const verdictOf = (t: readonly TimelineEntry[]) =>
    t.find((e) => e.type.endsWith('.staged.v1') || e.type.endsWith('.authorized.v1'))?.data.verdict as
      { level: string; judged_on?: Record<string, unknown> } | undefined;

  beforeAll(async () => {
    db = await createTestDatabase();
    nc = await connectNats({ url: testEnv().natsUrl, name: 'judged-target-e2e' });
    const env = {
      NATS_URL: testEnv().natsUrl,
      DATABASE_URL: db.url,
      ORMUZ_NAMESPACE: namespace,
      DEVICE_BRIDGE_PORT: '0',
      APPROVALS_PORT: '0',
      DEVICE_TOKENS: `${TENANT}:${DEVICE}:${TOKEN}`,
      LOG_LEVEL: 'warn',
    };
    for (const name of ['policy', 'device-bridge', 'approvals']) {
      services.push(spawnTracked(process.execPath, [join(ROOT, 'services', name, 'dist', 'main.js')], env));
    }
    const health = await waitFor(
      async () => {
        for (const s of services) if (s.hasExited()) throw new Error(`a service exited: ${s.stderr()}`);
        await call('policy.health', {});
        await call('approvals.health', {});
        return call('device-bridge.health', {});
      },
      { timeoutMs: 30_000, message: 'policy, approvals and device-bridge to answer health' },
    );
    journalDir = mkdtempSync(join(tmpdir(), 'ormuz-judged-target-'));
    phone = runSimulatedDevice({
      url: health.endpoints.devices!,
      tenant: TENANT,
      deviceId: DEVICE,
      token: TOKEN,
      journalDir,
      device: new SimulatedDevice({ foreground: { package: MESSAGES, screen: 'compose' } }),
    });
    await waitFor(() => phone.client.connected, { timeoutMs: 10_000, message: 'the phone to connect' });

    // The owner's agent types the recipient and the text, naming each field: low risk, and it runs.
    for (const [ref, field, text] of [
      ['e2', 'To', 'Alice Martin'],
      ['e3', 'Message', 'On my way'],
    ] as const) {
      const typed = await settle('device.type_text', { ref, target_text: field, text, foreground_package: MESSAGES });
      expect(typed.status).toBe('succeeded');
    }
    expect((await settle('device.screen_observe', {})).status).toBe('succeeded');
  }, 90_000);

  afterAll(async () => {
    await phone?.close();
    await nc?.drain();
    await killAll();
    if (journalDir) rmSync(journalDir, { recursive: true, force: true });
    await db?.drop();
  });

  it('stages the coordinate tap on Send, judged on "Send" in the messages app, and nothing is sent', async () => {
    const tap = await settle('device.tap', { x: 540, y: 600, foreground_package: MESSAGES });
    expect(tap).toMatchObject({ status: 'staged', summary: 'Tap "Send" in com.example.messages' });
    expect(verdictOf(tap.timeline)).toMatchObject({
      level: 'high',
      judged_on: { foreground_package: MESSAGES, target_text: 'Send', source: 'observation' },
    });
    expect(phone.device.messages).toEqual([]);
  });

  it('stages a tap by ref without text on Send, and enter in the message field', async () => {
    const byRef = await settle('device.tap', { ref: 'e4', foreground_package: MESSAGES });
    expect(byRef).toMatchObject({ status: 'staged', summary: 'Tap "Send" in com.example.messages' });
    const enter = await settle('device.press_key', { key: 'enter', foreground_package: MESSAGES });
    expect(enter).toMatchObject({
      status: 'staged',
      summary: 'Press enter in com.example.messages, which taps "Send"',
    });
    expect(verdictOf(enter.timeline)?.judged_on).toMatchObject({ target_text: 'Send' });
    expect(phone.device.messages).toEqual([]);
  });

  it('runs a coordinate tap on a harmless element, and then asks to observe again before the next one', async () => {
    const field = await settle('device.tap', { x: 540, y: 320, foreground_package: MESSAGES });
    expect(field.status).toBe('succeeded');
    expect(verdictOf(field.timeline)).toMatchObject({ level: 'low', judged_on: { target_text: 'Alice Martin' } });
    // The tap ran after the observation: the screen may have changed, so a blind tap is refused with the next step.
    const blind = await settle('device.tap', { x: 540, y: 600, foreground_package: MESSAGES });
    expect(blind.status).toBe('refused');
    expect(blind.message).toMatch(
      /device\.tap ran after it\); nothing was done\. Call device\.screen_observe, then call again naming the element/,
    );
    expect(phone.device.messages).toEqual([]);
  });

  it('the device refuses a tap judged on one element when another is under the finger now', async () => {
    expect((await settle('device.screen_observe', {})).status).toBe('succeeded');
    // Behind the platform's back, the phone goes back to the conversations; (540, 320) is now "Start chat".
    phone.device.setForeground({ package: MESSAGES, screen: 'inbox' });
    const tap = await settle('device.tap', { x: 540, y: 320, foreground_package: MESSAGES });
    expect(verdictOf(tap.timeline)).toMatchObject({ level: 'low', judged_on: { target_text: 'Alice Martin' } });
    expect(tap.status).toBe('failed');
    const failed = tap.timeline.find((e) => e.type.endsWith('.failed.v1'))!.data as {
      error: { code: string; message: string };
    };
    expect(failed.error.code).toBe('target_mismatch');
    expect(failed.error.message).toMatch(/would act on "Start chat"; nothing was tapped\. Call device\.screen_observe/);
    expect(phone.device.foreground).toEqual({ package: MESSAGES, screen: 'inbox' });
    expect(phone.device.messages).toEqual([]);
  });

  it('the device refuses an action judged for another app than the one in front, before claiming it', async () => {
    phone.device.setForeground({ package: SIM_PACKAGES.contacts, screen: 'list' });
    const swipe = await settle('device.swipe', { direction: 'up', foreground_package: MESSAGES });
    expect(verdictOf(swipe.timeline)).toMatchObject({
      level: 'low',
      judged_on: { foreground_package: MESSAGES, target_text: null },
    });
    // Refused before the start claim: the call is sealed (it never started), with the device's reason.
    expect(swipe.status).toBe('sealed');
    const sealed = swipe.timeline.find((e) => e.type.endsWith('.sealed.v1'))!.data as { reason: string };
    expect(sealed.reason).toMatch(/foreground_changed/);
    expect(sealed.reason).toMatch(
      /judged for com\.example\.messages, but com\.example\.contacts is in front now; nothing was done/,
    );
    expect(phone.device.history.map((h) => h.tool)).not.toContain('device.swipe');
  });

  it('an approved tap on Send runs while Send is under the finger: the message goes out', async () => {
    // Back on the compose screen with the recipient and text still typed; the owner approves the tap on "Send".
    phone.device.setForeground({ package: MESSAGES, screen: 'compose' });
    expect((await settle('device.screen_observe', {})).status).toBe('succeeded');
    const tap = await settle('device.tap', { x: 540, y: 600, foreground_package: MESSAGES });
    expect(tap.status).toBe('staged');
    await waitFor(
      () =>
        call('approvals.approve', { tenant: TENANT, approval_id: tap.approval_id! }).then(
          () => true,
          () => false,
        ),
      { timeoutMs: 20_000, message: 'the approval to be accepted' },
    );
    await waitFor(async () => (await timeline(tap.call_id)).status.status === 'succeeded', {
      timeoutMs: 20_000,
      message: 'the approved tap to run',
    });
    const authorized = (await timeline(tap.call_id)).timeline.find((e) => e.type.endsWith('.authorized.v1'))!;
    expect(authorized.data.verdict).toMatchObject({ level: 'high', judged_on: { target_text: 'Send' } });
    expect(phone.device.messages).toEqual([
      expect.objectContaining({ to: expect.objectContaining({ name: 'Alice Martin' }), body: 'On my way' }),
    ]);
  });
});
