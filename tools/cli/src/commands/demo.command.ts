/**
 * The main job: the whole platform on local defaults with one simulated phone and a scripted agent.
 *
 * Starts the five services as processes in the demo's own namespace (`demo` unless `--namespace` or
 * `ORMUZ_NAMESPACE` says otherwise), issues the simulated phone a fresh credential, connects it, starts a
 * conversation whose model asks for a low-risk and a high-risk call, approves the staged call as the owner would
 * (over the approvals HTTP API), then prints the conversation and every call's event timeline. A service that exits
 * meanwhile is reported and restarted (bounded, with backoff). At the end the phone's credential is revoked, its
 * journal deleted and the services stopped.
 */
import type { Command } from 'commander';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DevIssuer } from '@ormuz/auth';
import type { IssuedCredentialV1 } from '@ormuz/contracts';
import { NatsUnavailableError } from '@ormuz/event-log';
import { claimNamespace, DatabaseMissingError, openDatabase, PostgresUnavailableError } from '@ormuz/postgres';
import { runSimulatedDevice } from '@ormuz/device-sdk';
import type { CliContext, CliDefaults } from '../context.js';
import { conversationLines } from '../demo/conversation-print.js';
import { DEFAULT_MAX_RESTARTS, ServiceSupervisor } from '../demo/supervisor.js';
import {
  REPO_ROOT,
  SERVICES,
  spawnService,
  stopAll,
  waitHealthy,
  type ServiceHealth,
  type ServiceName,
  type ServiceProcess,
} from '../services.js';

/** The demo's namespace when neither `--namespace` nor `ORMUZ_NAMESPACE` is given: its streams and its database. */
export const DEMO_NAMESPACE = 'demo';
/** The simulated phone: tenant `demo`, device `phone-1` (what the README's CLI examples use). */
export const DEMO_TENANT = 'demo';
export const DEMO_DEVICE = 'phone-1';

/** The environment variable that pins each served endpoint's port, so a restarted service keeps its URL. */
const PORT_VARIABLES: Partial<Record<ServiceName, Record<string, string>>> = {
  approvals: { http: 'APPROVALS_PORT' },
  'device-bridge': { devices: 'DEVICE_BRIDGE_PORT' },
};

/** `{ APPROVALS_PORT: '41233' }` for the ports `health` reports. */
function pinnedPorts(name: ServiceName, health: ServiceHealth | undefined): Record<string, string> {
  const pinned: Record<string, string> = {};
  for (const [endpoint, variable] of Object.entries(PORT_VARIABLES[name] ?? {})) {
    const url = health?.endpoints[endpoint];
    if (url) pinned[variable] = new URL(url).port;
  }
  return pinned;
}

export function registerDemoCommand(program: Command, ctx: (defaults?: CliDefaults) => CliContext): void {
  program
    .command('demo')
    .description('run the platform with a simulated device and a demo agent, print what happened, and exit')
    .option('--keep-running', 'keep the platform up after the demo (Ctrl-C to stop)')
    .option('--timeout <ms>', 'give up when the demo has not finished in this time', '90000')
    .option('--deny', 'the owner denies the staged call instead of approving it')
    .option(
      '--max-restarts <n>',
      'restarts allowed per service that exits while the demo runs',
      String(DEFAULT_MAX_RESTARTS),
    )
    .action(async (o: { keepRunning?: boolean; timeout: string; deny?: boolean; maxRestarts: string }) => {
      const c = ctx({ namespace: DEMO_NAMESPACE });
      const namespace = c.config.namespace;
      const out = (s = '') => process.stdout.write(`${s}\n`);
      const timeoutMs = Number(o.timeout);
      if (!Number.isInteger(timeoutMs) || timeoutMs < 1000) {
        throw new Error(`--timeout takes milliseconds, a whole number from 1000, not ${o.timeout}.`);
      }
      const deadline = Date.now() + timeoutMs;
      const remaining = () => Math.max(1000, deadline - Date.now());
      const maxRestarts = Number(o.maxRestarts);
      if (!Number.isInteger(maxRestarts) || maxRestarts < 0) {
        throw new Error(`--max-restarts takes a whole number from 0, not ${o.maxRestarts}.`);
      }

      // Fail fast, naming the dependency that is missing, or the namespace that owns the database.
      const nc = await c.nc().catch((err: unknown) => {
        throw err instanceof NatsUnavailableError ? err : new NatsUnavailableError(c.config.natsUrl, String(err));
      });
      const db = await openDatabase({ url: c.config.databaseUrl, createIfMissing: c.config.createDatabase }).catch(
        (err: unknown) => {
          if (err instanceof PostgresUnavailableError || err instanceof DatabaseMissingError) throw err;
          throw new PostgresUnavailableError(c.config.databaseUrl, String(err));
        },
      );
      try {
        await claimNamespace(db, namespace);
      } finally {
        await db.destroy();
      }

      // The demo signs in as the tenant's operator (it sets up the phone and starts the agent) and decides as its
      // owner, with tokens from the development issuer the services trust on a local start.
      const tokens = await demoTokens(c, o.keepRunning ? 12 * 3600 : Math.ceil(timeoutMs / 1000) + 60);
      c.presentToken(tokens.operator);

      const logDir = join(REPO_ROOT, '.ormuz', 'logs');
      const env = {
        NATS_URL: c.config.natsUrl,
        DATABASE_URL: c.config.databaseUrl,
        ORMUZ_NAMESPACE: namespace,
        // Port 0: each service picks a free port and reports it in its health answer; a restart keeps that port.
        APPROVALS_PORT: '0',
        DEVICE_BRIDGE_PORT: '0',
        LOG_LEVEL: process.env.LOG_LEVEL ?? 'info',
      };
      out(`Ormuz demo: namespace ${namespace}, NATS ${c.config.natsUrl}; service logs in ${logDir}`);
      const supervisor = new ServiceSupervisor({
        spawn: (name, pinned) => spawnService(name, { ...env, ...pinned }, logDir),
        waitHealthy: async (proc) => {
          const health = await waitHealthy(nc, namespace, [proc], 30_000);
          return health[proc.name]!;
        },
        report: (line) => out(`[supervisor] ${line}`),
        maxRestarts,
      });
      const procs: ServiceProcess[] = SERVICES.map((s) => spawnService(s, env, logDir));
      let device: { close(): Promise<void> } | undefined;
      let journalDir: string | undefined;
      let credential: IssuedCredentialV1['credential'] | undefined;
      const shutdown = async () => {
        await device?.close().catch(() => undefined);
        if (journalDir) rmSync(journalDir, { recursive: true, force: true });
        if (credential) {
          // The phone's token ends with the demo; it was never printed, and only its hash was stored.
          const revoke = { tenant: DEMO_TENANT, device_id: DEMO_DEVICE, credential_id: credential.credential_id };
          await c
            .call('device-bridge.credentials.revoke', revoke, 3000)
            .catch((err: unknown) =>
              out(
                `could not revoke the demo phone's credential ${revoke.credential_id} (${(err as Error).message}); ` +
                  `revoke it with: ormuz --namespace ${namespace} device credentials revoke --tenant ${DEMO_TENANT} --device ${DEMO_DEVICE}`,
              ),
            );
        }
        await stopAll(supervisor.stop().concat(procs.filter((p) => !supervisor.processes.includes(p))));
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
        const health = await waitHealthy(nc, namespace, procs, remaining());
        for (const proc of procs) supervisor.watch(proc, pinnedPorts(proc.name, health[proc.name]));
        const approvalsUrl = health.approvals?.endpoints.http;
        const devicesUrl = health['device-bridge']?.endpoints.devices;
        if (!approvalsUrl || !devicesUrl)
          throw new Error('approvals or device-bridge did not report its URL in its health answer.');
        out(`services up: ${SERVICES.join(', ')}`);
        const endpoints = [
          `  approvals HTTP API  ${approvalsUrl}`,
          `  approvals console   ${approvalsUrl}/console`,
          `  device WebSocket    ${devicesUrl}`,
        ];
        for (const line of endpoints) out(line);

        const issued = await c.call('device-bridge.credentials.issue', {
          tenant: DEMO_TENANT,
          device_id: DEMO_DEVICE,
          // Revoked at the end; should the demo itself be killed, a one-off run's token also expires on its own.
          ...(o.keepRunning ? {} : { ttl_seconds: Math.ceil(timeoutMs / 1000) + 60 }),
        });
        credential = issued.credential;
        journalDir = mkdtempSync(join(tmpdir(), 'ormuz-demo-device-'));
        device = runSimulatedDevice({
          url: devicesUrl,
          tenant: DEMO_TENANT,
          deviceId: DEMO_DEVICE,
          token: issued.token,
          journalDir,
        });
        await poll(
          () => c.call('device-bridge.devices', { tenant: DEMO_TENANT }, 2000),
          (r) => r.devices.some((d) => d.device_id === DEMO_DEVICE),
          remaining(),
          'the simulated device to connect to the bridge',
        );
        out(
          `device ${DEMO_TENANT}/${DEMO_DEVICE} connected to ${devicesUrl} (its journal: ${journalDir}, deleted at the end)`,
        );

        const started = await c.call('model-loop.start', {
          tenant: DEMO_TENANT,
          agent_id: 'demo-agent',
          task: 'Tell Alice I am running ten minutes late.',
          device_id: DEMO_DEVICE,
          model: 'scripted:demo',
        });
        const conversationId = started.conversation_id;
        out(`conversation ${conversationId} started`);
        const get = () => c.call('model-loop.get', { tenant: DEMO_TENANT, conversation_id: conversationId }, 3000);

        const paused = await poll(
          get,
          (v) => v.status === 'paused' || v.status === 'completed',
          remaining(),
          'the conversation to pause for approval',
        );
        for (const p of paused.pending) {
          out(`owner inbox: ${p.approval_id} — ${p.summary}`);
          const verb = o.deny ? 'deny' : 'approve';
          await decideOverHttp(
            `${approvalsUrl}/v1/tenants/${DEMO_TENANT}/approvals/${p.approval_id}/${verb}`,
            o.deny ? { reason: 'not now' } : {},
            tokens.owner,
            remaining(),
          );
          out(`owner ${verb === 'approve' ? 'approved' : 'denied'} ${p.approval_id} over HTTP`);
        }

        const done = await poll(get, (v) => v.status === 'completed', remaining(), 'the conversation to complete');
        out('\n── conversation ─────────────────────────────────────────');
        for (const line of conversationLines(done.messages)) out(line);
        const callIds = [...new Set(done.messages.flatMap((m) => m.tool_calls?.map((t) => t.call_id) ?? []))];
        out('\n── call timelines ───────────────────────────────────────');
        for (const callId of callIds) {
          const s = await c.call('policy.status', { tenant: DEMO_TENANT, call_id: callId, timeline: true });
          out(`${callId} ${s.status.tool ?? ''}: ${s.status.status}`);
          for (const t of s.timeline ?? []) out(`   #${t.seq} ${t.type.replace('ormuz.toolcall.', '')} (${t.source})`);
          const audit = await poll(
            () => c.call('audit.call', { tenant: DEMO_TENANT, call_id: callId }, 2000).catch(() => undefined),
            (r) => r !== undefined && r.status === s.status.status,
            remaining(),
            `the audit row of ${callId}`,
          );
          out(`   audit row: status=${String(audit?.status)} decided_by=${String(audit?.decided_by ?? 'NULL')}`);
        }
        out(`\nresult: ${done.final_text ?? '(no final answer)'}`);
        if (o.keepRunning) {
          out(
            `\nplatform running in namespace ${namespace}; Ctrl-C to stop. A service that exits is restarted (at most ${maxRestarts} times).`,
          );
          for (const line of endpoints) out(line);
          out(`  simulated phone     ${DEMO_TENANT}/${DEMO_DEVICE}, connected`);
          out(
            `The CLI must use the same namespace: in another shell, export ORMUZ_NAMESPACE=${namespace} (README, "The operator CLI").`,
          );
          out(`Tokens (development issuer, valid 12 h):`);
          out(`  operator  export ORMUZ_TOKEN=${tokens.operator}`);
          out(`  owner     ${tokens.owner}`);
          out(`Sign in to the approvals console at ${approvalsUrl}/console with the owner token.`);
          out(`The HTTP API (README, "HTTP API"; described at ${approvalsUrl}/openapi.json):`);
          out(`  export ORMUZ_API=${approvalsUrl}`);
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
async function decideOverHttp(url: string, body: unknown, token: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    let transient: string;
    try {
      const res = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
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
      throw new Error(
        `Timed out waiting for ${what}${lastError ? ` (last error: ${(lastError as Error).message})` : ''}.`,
      );
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** The demo's operator and owner, signed by the development issuer (refused when the services trust another issuer). */
async function demoTokens(c: CliContext, ttlSeconds: number): Promise<{ operator: string; owner: string }> {
  const { auth } = c.config;
  if (!auth.devIssuerDir) {
    throw new Error(
      `The demo signs in with the development issuer, but ORMUZ_AUTH_ISSUER names ${auth.issuer}: unset it.`,
    );
  }
  const issuer = await DevIssuer.open(auth.devIssuerDir);
  const sign = (role: 'operator' | 'owner') =>
    issuer.sign({
      tenant: DEMO_TENANT,
      roles: [role],
      subject: `${role}@${DEMO_TENANT}`,
      ttlSeconds,
      audience: auth.audience,
    });
  return { operator: await sign('operator'), owner: await sign('owner') };
}
