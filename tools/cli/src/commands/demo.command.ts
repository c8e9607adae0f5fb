/**
 * The main job: the whole platform on local defaults with one simulated phone and a scripted agent.
 *
 * Starts the five services as processes, connects a simulated device to the bridge, starts a conversation whose
 * model asks for a low-risk and a high-risk call, approves the staged call as the owner would (over the approvals
 * HTTP API), then prints the conversation and every call's event timeline, and stops everything.
 */
import type { Command } from 'commander';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NatsUnavailableError } from '@ormuz/event-log';
import { openDatabase, PostgresUnavailableError } from '@ormuz/postgres';
import { runSimulatedDevice } from '@ormuz/device-sdk';
import type { CliContext } from '../context.js';
import { REPO_ROOT, SERVICES, spawnService, stopAll, waitHealthy, type ServiceProcess } from '../services.js';

interface ConversationView {
  conversation_id: string;
  status: string;
  messages: { role: string; content: string; tool_calls?: { name: string; call_id: string; arguments: unknown }[]; tool_call_id?: string }[];
  pending: { call_id: string; approval_id: string; summary: string }[];
  final_text: string | null;
}

const TENANT = 'demo';
const DEVICE = 'phone-1';
const DEVICE_TOKEN = 'demo-device-token';

export function registerDemoCommand(program: Command, ctx: () => CliContext): void {
  program
    .command('demo')
    .description('run the platform with a simulated device and a demo agent, print what happened, and exit')
    .option('--keep-running', 'keep the platform up after the demo (Ctrl-C to stop)')
    .option('--timeout <ms>', 'give up when the demo has not finished in this time', '90000')
    .option('--deny', 'the owner denies the staged call instead of approving it')
    .action(async (o: { keepRunning?: boolean; timeout: string; deny?: boolean }) => {
      const c = ctx();
      const out = (s = '') => process.stdout.write(`${s}\n`);
      const deadline = Date.now() + Number(o.timeout);
      const remaining = () => Math.max(1000, deadline - Date.now());

      // Fail fast, naming the dependency that is missing.
      const nc = await c.nc().catch((err: unknown) => {
        throw err instanceof NatsUnavailableError ? err : new NatsUnavailableError(c.config.natsUrl, String(err));
      });
      const db = await openDatabase({ url: c.config.databaseUrl }).catch((err: unknown) => {
        throw err instanceof PostgresUnavailableError ? err : new PostgresUnavailableError(c.config.databaseUrl, String(err));
      });
      await db.destroy();

      const logDir = join(REPO_ROOT, '.ormuz', 'logs');
      const env = {
        NATS_URL: c.config.natsUrl,
        DATABASE_URL: c.config.databaseUrl,
        ORMUZ_NAMESPACE: c.config.namespace,
        // Port 0: each service picks a free port and reports it in its health answer.
        APPROVALS_PORT: '0',
        DEVICE_BRIDGE_PORT: '0',
        DEVICE_TOKENS: `${TENANT}:${DEVICE}:${DEVICE_TOKEN}`,
        LOG_LEVEL: process.env.LOG_LEVEL ?? 'info',
      };
      out(`Ormuz demo: namespace ${c.config.namespace}, NATS ${c.config.natsUrl}; service logs in ${logDir}`);
      const procs: ServiceProcess[] = SERVICES.map((s) => spawnService(s, env, logDir));
      let device: { close(): Promise<void> } | undefined;
      const shutdown = async () => {
        await device?.close().catch(() => undefined);
        await stopAll(procs);
      };
      // Ctrl-C or a process manager's SIGTERM: stop the services too, never leave them running without the demo.
      let stopRequested: (() => void) | undefined; // set while --keep-running waits; the finally below then stops all
      const onSignal = () => {
        if (stopRequested) return stopRequested();
        void shutdown().finally(() => process.exit(130));
      };
      process.once('SIGINT', onSignal);
      process.once('SIGTERM', onSignal);
      try {
        const health = await waitHealthy(nc, c.config.namespace, procs, remaining());
        const approvalsUrl = health.approvals?.endpoints.http;
        const devicesUrl = health['device-bridge']?.endpoints.devices;
        if (!approvalsUrl || !devicesUrl) throw new Error('approvals or device-bridge did not report its URL in its health answer.');
        out(`services up: ${SERVICES.join(', ')}`);

        device = runSimulatedDevice({
          url: devicesUrl,
          tenant: TENANT,
          deviceId: DEVICE,
          token: DEVICE_TOKEN,
          journalDir: mkdtempSync(join(tmpdir(), 'ormuz-demo-device-')),
        });
        await poll(
          () => c.call<{ devices: { device_id: string }[] }>('device-bridge', 'devices', { tenant: TENANT }, 2000),
          (r) => r.devices.some((d) => d.device_id === DEVICE),
          remaining(),
          'the simulated device to connect to the bridge',
        );
        out(`device ${DEVICE} connected to ${devicesUrl}`);

        const started = await c.call<{ conversation_id: string }>('model-loop', 'start', {
          tenant: TENANT,
          agent_id: 'demo-agent',
          task: 'Tell Alice I am running ten minutes late.',
          device_id: DEVICE,
          model: 'scripted:demo',
        });
        const conversationId = started.conversation_id;
        out(`conversation ${conversationId} started`);
        const get = () => c.call<ConversationView>('model-loop', 'get', { tenant: TENANT, conversation_id: conversationId }, 3000);

        const paused = await poll(get, (v) => v.status === 'paused' || v.status === 'completed', remaining(), 'the conversation to pause for approval');
        for (const p of paused.pending) {
          out(`owner inbox: ${p.approval_id} — ${p.summary}`);
          const verb = o.deny ? 'deny' : 'approve';
          await decideOverHttp(
            `${approvalsUrl}/v1/tenants/${TENANT}/approvals/${p.approval_id}/${verb}`,
            { decided_by: 'owner@demo', ...(o.deny ? { reason: 'not now' } : {}) },
            remaining(),
          );
          out(`owner ${verb === 'approve' ? 'approved' : 'denied'} ${p.approval_id} over HTTP`);
        }

        const done = await poll(get, (v) => v.status === 'completed', remaining(), 'the conversation to complete');
        out('\n── conversation ─────────────────────────────────────────');
        for (const m of done.messages) {
          if (m.tool_calls?.length) {
            for (const t of m.tool_calls) out(`${m.role}: asks ${t.name} ${JSON.stringify(t.arguments)} → call ${t.call_id}`);
            if (m.content) out(`${m.role}: ${m.content}`);
          } else {
            out(`${m.role}${m.tool_call_id ? ` (${m.tool_call_id})` : ''}: ${m.content.length > 400 ? `${m.content.slice(0, 400)}…` : m.content}`);
          }
        }
        const callIds = [...new Set(done.messages.flatMap((m) => m.tool_calls?.map((t) => t.call_id) ?? []))];
        out('\n── call timelines ───────────────────────────────────────');
        for (const callId of callIds) {
          const s = await c.call<{ status: { status: string; tool?: string }; timeline: { seq: number; type: string; source: string }[] }>(
            'policy',
            'status',
            { tenant: TENANT, call_id: callId, timeline: true },
          );
          out(`${callId} ${s.status.tool ?? ''}: ${s.status.status}`);
          for (const t of s.timeline) out(`   #${t.seq} ${t.type.replace('ormuz.toolcall.', '')} (${t.source})`);
          const audit = await poll(
            () => c.call<Record<string, unknown>>('audit', 'call', { tenant: TENANT, call_id: callId }, 2000).catch(() => undefined),
            (r) => r !== undefined && r.status === s.status.status,
            remaining(),
            `the audit row of ${callId}`,
          );
          out(`   audit row: status=${String(audit?.status)} decided_by=${String(audit?.decided_by ?? 'NULL')}`);
        }
        out(`\nresult: ${done.final_text ?? '(no final answer)'}`);
        if (o.keepRunning) {
          out(`\nplatform running (approvals API ${approvalsUrl}); Ctrl-C to stop`);
          await new Promise<void>((resolve) => (stopRequested = resolve));
        }
      } finally {
        process.off('SIGINT', onSignal);
        process.off('SIGTERM', onSignal);
        await shutdown();
      }
    });
}

/**
 * Posts the owner's decision. A 5xx answer or a failed connection is transient (NATS restarting under approvals: the
 * append may or may not have been recorded) and the decision is sent again until the deadline; that is safe because
 * the same owner's repeated decision records nothing new. A 4xx answer is final and thrown with its message.
 */
async function decideOverHttp(url: string, body: unknown, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    let transient: string;
    try {
      const res = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(Math.max(1000, deadline - Date.now())),
      });
      const reply = (await res.json().catch(() => ({}))) as { error?: { message: string } };
      const message = `approvals answered ${res.status}: ${reply.error?.message ?? JSON.stringify(reply)}`;
      if (res.ok) return;
      if (res.status < 500) throw new Error(message);
      transient = message;
    } catch (err) {
      if (!(err instanceof TypeError || (err instanceof DOMException && err.name === 'TimeoutError'))) throw err;
      transient = `approvals did not answer: ${err.message}`;
    }
    if (Date.now() > deadline) throw new Error(`The owner's decision was not recorded in time (${transient}).`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** Polls `read` until `done` holds; tolerates transient errors (a NATS restart) until the deadline. */
async function poll<T>(read: () => Promise<T>, done: (v: T) => boolean, timeoutMs: number, what: string): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const v = await read();
      if (done(v)) return v;
    } catch (err) {
      lastError = err;
    }
    if (Date.now() > deadline) {
      throw new Error(`Timed out waiting for ${what}${lastError ? ` (last error: ${(lastError as Error).message})` : ''}.`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}
