/**
 * The main job: the whole platform on local defaults with one simulated phone and a scripted agent, with
 * authentication on at every step.
 *
 * Unless the user named a NATS server (`--nats`, `NATS_URL`), the demo runs one of its own (`nats-server` under the
 * shipped authorization, infra/nats/authorization.conf, on a free loopback port, with fresh passwords each run): each
 * service connects as its own NATS user and the demo's CLI as `cli`, as in production. Its JetStream store is kept in
 * `.ormuz/nats` across runs, like the `demo` database whose projection checkpoints point into it. Without a
 * `nats-server` binary it falls back to the NATS on 127.0.0.1:4222, without users.
 *
 * Starts the six services as processes in the demo's own namespace (`demo` unless `--namespace` or `ORMUZ_NAMESPACE`
 * says otherwise), issues the simulated phone a fresh credential, connects it, issues the demo agent an API key and
 * starts with it a conversation whose model asks for a low-risk and a high-risk call, approves the staged call as the
 * owner would (over the approvals HTTP API), then prints the conversation and every call's event timeline. A service
 * that exits meanwhile is reported and restarted (bounded, with backoff). With `--keep-running` the agent then runs
 * once more and its staged call is left for the owner (printed with its approval id, the console's URL and the owner
 * token), and the MCP endpoint is printed with an API key of the demo agent and how to configure an MCP client with
 * them, until Ctrl-C. At the end the phone's credential and the agent's keys are revoked, the phone's journal
 * deleted, and the services and the demo's NATS server stopped.
 */
import type { Command } from 'commander';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { isAbsolute, join, relative } from 'node:path';
import { DevIssuer, type Role } from '@ormuz/auth';
import type { IssuedCredentialV1 } from '@ormuz/contracts';
import { natsServerBinary, NatsUnavailableError, startNatsServer, type NatsServerHandle } from '@ormuz/event-log';
import type { BaseConfig } from '@ormuz/service-kit/client';
import type { CliContext, CliDefaults } from '../context.js';
import { conversationLines, standingLines } from '../demo/conversation-print.js';
import { modelSettingsOf, withModelSettingsOptions, type ModelSettingsOptions } from './agents.command.js';
import { assertStreamsMatchDatabase, readStreamEnds, readStreamEndsOver } from '../demo/store-check.js';
import { DEFAULT_MAX_RESTARTS, ServiceSupervisor } from '../demo/supervisor.js';
import {
  natsPasswordVariable,
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
/** The scripted agent: it starts its conversation with an API key of its own, issued for the run. */
export const DEMO_AGENT = 'demo-agent';

/**
 * Where the demo keeps what outlives a step of it: its NATS server's JetStream store (`nats/`), the logs (`logs/`)
 * and, with `--keep-running`, `demo.env` for the CLI in another shell. `.ormuz` in the repository (git-ignored);
 * `ORMUZ_DEMO_STATE_DIR` moves it, so that tests (or a second demo) do not share the developer's store.
 */
export function demoStateDir(env: NodeJS.ProcessEnv = process.env): string {
  return env.ORMUZ_DEMO_STATE_DIR || join(REPO_ROOT, '.ormuz');
}

/** The environment variable that pins each served endpoint's port, so a restarted service keeps its URL. */
const PORT_VARIABLES: Partial<Record<ServiceName, Record<string, string>>> = {
  approvals: { http: 'APPROVALS_PORT' },
  'device-bridge': { devices: 'DEVICE_BRIDGE_PORT' },
  'mcp-gateway': { http: 'MCP_GATEWAY_PORT' },
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
  const demo = program
    .command('demo')
    .description('run the platform with a simulated device and a demo agent, print what happened, and exit')
    .option('--keep-running', 'keep the platform up after the demo (Ctrl-C to stop)')
    .option('--timeout <ms>', 'give up when the demo has not finished in this time', '90000')
    .option('--deny', 'the owner denies the staged call instead of approving it')
    .option('--model <provider:model>', "the demo agent's model (default scripted:demo), e.g. openai-compatible:qwen3-8b")
    .option(
      '--max-restarts <n>',
      'restarts allowed per service that exits while the demo runs',
      String(DEFAULT_MAX_RESTARTS),
    );
  withModelSettingsOptions(demo);
  demo.action(
    async (
      o: { keepRunning?: boolean; timeout: string; deny?: boolean; maxRestarts: string; model?: string } & ModelSettingsOptions,
    ) => {
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
      const stateDir = demoStateDir();
      const logDir = join(stateDir, 'logs');
      const envFile = join(stateDir, 'demo.env');

      let server: NatsServerHandle | undefined;
      let supervisor: ServiceSupervisor | undefined;
      let procs: ServiceProcess[] = [];
      let device: { close(): Promise<void> } | undefined;
      let journalDir: string | undefined;
      let credential: IssuedCredentialV1['credential'] | undefined;
      // The demo agent's keys (its conversations', and with --keep-running the one printed for MCP clients).
      const agentKeys: string[] = [];
      let envFileWritten = false;
      // Undoes what was done so far, in reverse: what is revoked over NATS is revoked before the services and the
      // server stop. Also what a signal ends with, at any point.
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
        for (const agentKey of agentKeys) {
          // Like the phone's credential, the agent's keys end with the run.
          const revoke = { tenant: DEMO_TENANT, agent_id: DEMO_AGENT, key_id: agentKey };
          await c
            .call('policy.keys.revoke', revoke, 3000)
            .catch((err: unknown) =>
              out(
                `could not revoke the demo agent's API key ${agentKey} (${(err as Error).message}); revoke it with: ` +
                  `ormuz --namespace ${namespace} keys revoke --tenant ${DEMO_TENANT} --agent ${DEMO_AGENT} --key ${agentKey}`,
              ),
            );
        }
        const running = supervisor ? supervisor.stop() : [];
        await stopAll(running.concat(procs.filter((p) => !running.includes(p))));
        if (envFileWritten) rmSync(envFile, { force: true });
        if (server) {
          // The CLI's connection first: it would otherwise keep trying to reach the stopped server.
          await c.close();
          await server.stop();
        }
      };
      // Ctrl-C or a process manager's SIGTERM: stop the services and the server too, never leave them running without
      // the demo. (Should the demo exit before `server` is set, the server is killed with it.)
      let stopRequested: (() => void) | undefined; // set while --keep-running waits; the finally below then stops all
      const onSignal = () => {
        if (stopRequested) return stopRequested();
        void shutdown().finally(() => process.exit(130));
      };
      process.once('SIGINT', onSignal);
      process.once('SIGTERM', onSignal);
      try {
        // The NATS server: the user's, the demo's own (service users), or the local one without users.
        const nats = await demoNats(c, stateDir, logDir, out);
        server = nats.server;

        // Fail fast, naming the dependency that is missing, or the namespace that owns the database.
        const nc = await c.nc().catch((err: unknown) => {
          throw err instanceof NatsUnavailableError ? err : new NatsUnavailableError(c.config.natsUrl, String(err));
        });
        // Postgres' client and the simulated device load here, not with every CLI command.
        const { claimNamespace, DatabaseMissingError, openDatabase, PostgresUnavailableError } = await import(
          '@ormuz/postgres'
        );
        const { runSimulatedDevice } = await import('@ormuz/device-sdk');
        const db = await openDatabase<any>({
          url: c.config.databaseUrl,
          createIfMissing: c.config.createDatabase,
        }).catch((err: unknown) => {
          if (err instanceof PostgresUnavailableError || err instanceof DatabaseMissingError) throw err;
          throw new PostgresUnavailableError(c.config.databaseUrl, String(err));
        });
        try {
          await claimNamespace(db, namespace);
          // The streams and the database's checkpoints into them must be from the same runs. The demo's own server
          // tells over its monitoring port; a server the user named, over JetStream when the demo's connection may
          // use it (no NATS user: a `cli` user may not, and then nothing is checked).
          const { databaseUrl } = c.config;
          const monitorUrl = server?.monitorUrl;
          if (server && monitorUrl) {
            await assertStreamsMatchDatabase(db, () => readStreamEnds(monitorUrl), {
              storeDir: shown(server.storeDir),
              databaseUrl,
            });
          } else if (!c.config.natsUser) {
            await assertStreamsMatchDatabase(db, (names) => readStreamEndsOver(nc, names), {
              natsUrl: c.config.natsUrl,
              databaseUrl,
            });
          }
        } finally {
          await db.destroy();
        }

        // The demo signs in as the tenant's operator (it sets up the phone and the agent's key) and decides as its
        // owner, with tokens from the development issuer the services trust on a local start.
        const ttlSeconds = o.keepRunning ? 12 * 3600 : Math.ceil(timeoutMs / 1000) + 60;
        const tokens = await demoTokens(c, ttlSeconds);
        c.presentToken(tokens.operator);

        const env = {
          NATS_URL: c.config.natsUrl,
          DATABASE_URL: c.config.databaseUrl,
          ORMUZ_NAMESPACE: namespace,
          // Port 0: each service picks a free port and reports it in its health answer; a restart keeps that port.
          APPROVALS_PORT: '0',
          DEVICE_BRIDGE_PORT: '0',
          MCP_GATEWAY_PORT: '0',
          // No probe listeners: the demo waits on each service's NATS health. A HEALTH_PORT in the shell would give
          // all six services the same port, and all but one would fail to start.
          HEALTH_PORT: '',
          // A local platform: webhooks may go to a receiver on this machine or its network (approvals' SSRF guard).
          ORMUZ_WEBHOOKS_ALLOW_PRIVATE: process.env.ORMUZ_WEBHOOKS_ALLOW_PRIVATE ?? 'true',
          LOG_LEVEL: process.env.LOG_LEVEL ?? 'info',
          // On the demo's own server, each service connects as its own user (services.ts, serviceNatsEnv).
          ...nats.servicePasswords,
        };
        out(`Ormuz demo: namespace ${namespace}, NATS ${c.config.natsUrl}; logs in ${shown(logDir)}`);
        supervisor = new ServiceSupervisor({
          spawn: (name, pinned) => spawnService(name, { ...env, ...pinned }, logDir),
          waitHealthy: async (proc) => {
            const health = await waitHealthy(nc, namespace, [proc], 30_000);
            return health[proc.name]!;
          },
          report: (line) => out(`[supervisor] ${line}`),
          maxRestarts,
        });
        procs = SERVICES.map((s) => spawnService(s, env, logDir));
        const health = await waitHealthy(nc, namespace, procs, remaining());
        for (const proc of procs) supervisor.watch(proc, pinnedPorts(proc.name, health[proc.name]));
        const approvalsUrl = health.approvals?.endpoints.http;
        const devicesUrl = health['device-bridge']?.endpoints.devices;
        const gatewayUrl = health['mcp-gateway']?.endpoints.http;
        if (!approvalsUrl || !devicesUrl || !gatewayUrl)
          throw new Error('approvals, device-bridge or mcp-gateway did not report its URL in its health answer.');
        const mcpUrl = `${gatewayUrl}/mcp`;
        out(`services up: ${SERVICES.join(', ')}`);
        if (server?.monitorUrl) {
          const users = await connectedUsers(server.monitorUrl);
          out(`NATS users connected: ${users.join(', ')} (each service as its own, the demo as cli)`);
        }
        const endpoints = [
          `  approvals HTTP API  ${approvalsUrl}`,
          `  approvals console   ${approvalsUrl}/console`,
          `  device WebSocket    ${devicesUrl}`,
          `  MCP endpoint        ${mcpUrl}`,
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

        // The agent is a program: it starts its conversation with an API key of its own, not with a person's token.
        const key = await c.call('policy.keys.issue', {
          tenant: DEMO_TENANT,
          agent_id: DEMO_AGENT,
          label: 'ormuz demo (revoked when the demo stops)',
        });
        agentKeys.push(key.key.key_id);
        out(`agent ${DEMO_TENANT}/${DEMO_AGENT} signs in with API key ${key.key.key_id} (issued for this run)`);
        // The agent's model, as an operator sets it: its conversations start without naming one.
        const settings = modelSettingsOf(o);
        const configured = await c.call('model-loop.agents.set', {
          tenant: DEMO_TENANT,
          agent_id: DEMO_AGENT,
          model: o.model ?? 'scripted:demo',
          ...(settings ? { settings } : {}),
        });
        out(
          `agent ${DEMO_TENANT}/${DEMO_AGENT} runs on ${configured.model}` +
            (configured.settings.base_url ? ` at ${configured.settings.base_url}` : ''),
        );
        const started = await c.call(
          'model-loop.start',
          {
            tenant: DEMO_TENANT,
            agent_id: DEMO_AGENT,
            task: 'Tell Alice I am running ten minutes late.',
            device_id: DEMO_DEVICE,
          },
          { credential: key.api_key },
        );
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
        for (const line of standingLines(done)) out(line);
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
          // One more run of the agent, whose staged call the demo leaves to the owner: it waits in the console.
          const waiting = await c.call(
            'model-loop.start',
            {
              tenant: DEMO_TENANT,
              agent_id: DEMO_AGENT,
              task: 'Tell Alice I am running ten minutes late.',
              device_id: DEMO_DEVICE,
            },
            { credential: key.api_key },
          );
          const getWaiting = () =>
            c.call('model-loop.get', { tenant: DEMO_TENANT, conversation_id: waiting.conversation_id }, 3000);
          const staged = await poll(
            getWaiting,
            (v) => v.pending.length > 0 || v.status === 'completed',
            remaining(),
            'the second conversation to pause for the owner',
          );
          // The CLI in another shell: this server, the CLI's NATS user, this namespace and a token for every command
          // of the README's operator-CLI block (operator, owner and analyst of the demo's tenant).
          const cliToken = await signDemoToken(c, ['operator', 'owner', 'analyst'], 'operator', ttlSeconds);
          mkdirSync(stateDir, { recursive: true });
          writeFileSync(envFile, demoEnvFile(c.config, cliToken), { mode: 0o600 });
          envFileWritten = true;
          out(
            `\nplatform running in namespace ${namespace}; Ctrl-C to stop. A service that exits is restarted (at most ${maxRestarts} times).`,
          );
          for (const line of endpoints) out(line);
          out(`  simulated phone     ${DEMO_TENANT}/${DEMO_DEVICE}, connected`);
          out(`  NATS                ${c.config.natsUrl}${server ? " (the demo's own server, until it stops)" : ''}`);
          out(`The CLI in another shell (README, "The operator CLI") uses this platform after:`);
          out(`  source ${shown(envFile)}`);
          out(
            `  (NATS_URL${c.config.natsUser ? `, NATS_USER=${c.config.natsUser} and its password` : ''}, ` +
              `ORMUZ_NAMESPACE=${namespace} and ORMUZ_TOKEN: operator, owner and analyst of tenant ${DEMO_TENANT}; ` +
              `the file is removed when the demo stops)`,
          );
          out(`Owner token (development issuer, valid 12 h), for the console and the approvals HTTP API:`);
          out(`  ${tokens.owner}`);
          out(`Sign in to the approvals console at ${approvalsUrl}/console with the owner token.`);
          out(`The HTTP API (README, "HTTP API"; described at ${approvalsUrl}/openapi.json):`);
          out(`  export ORMUZ_API=${approvalsUrl}`);
          // A key for the user's own MCP client, acting as the demo agent on the phone; revoked when the demo stops.
          const mcpKey = await c.call('policy.keys.issue', {
            tenant: DEMO_TENANT,
            agent_id: DEMO_AGENT,
            label: 'MCP clients of ormuz demo (revoked when the demo stops)',
          });
          agentKeys.push(mcpKey.key.key_id);
          for (const line of mcpClientLines(mcpUrl, mcpKey.api_key)) out(line);
          for (const p of staged.pending) {
            out(`\nwaiting for the owner: ${p.approval_id} — ${p.summary}`);
            out(`  approve or deny it in the console, ${approvalsUrl}/console, signed in with the owner token above`);
          }
          let stopping = false;
          const stopped = new Promise<void>((resolve) => (stopRequested = resolve)).then(() => (stopping = true));
          // Tells of the owner's decision once the conversation has finished with it; ends with the demo.
          const waitingOutcome = (async () => {
            while (!stopping) {
              const v = await getWaiting().catch(() => undefined);
              if (v?.status === 'completed') {
                const ids = staged.pending.map((p) => p.approval_id).join(', ');
                out(
                  `the owner decided ${ids}; conversation ${waiting.conversation_id} completed: ${v.final_text ?? ''}`,
                );
                return;
              }
              await Promise.race([stopped, new Promise((r) => setTimeout(r, 500))]);
            }
          })();
          await stopped;
          await waitingOutcome;
        }
      } finally {
        process.off('SIGINT', onSignal);
        process.off('SIGTERM', onSignal);
        await shutdown();
      }
    },
  );
}

/**
 * The NATS server the demo uses. A server the user named (`--nats`, `NATS_URL`) as it is: service users when the
 * `NATS_<SERVICE>_PASSWORD` variables are set, as for `ormuz migrate`. Otherwise a server of the demo's own under the
 * shipped authorization, with passwords made for this run (a letter first: nats-server reads the variable as a
 * configuration value, see authorization.conf) and the CLI pointed at it as user `cli`; without a binary, the local
 * server without users.
 */
async function demoNats(
  c: CliContext,
  stateDir: string,
  logDir: string,
  out: (line: string) => void,
): Promise<{ server?: NatsServerHandle; servicePasswords: Record<string, string> }> {
  if (c.options.nats || process.env.NATS_URL) return { servicePasswords: {} };
  const binary = natsServerBinary();
  if (!binary) {
    out(
      `No nats-server binary found (NATS_SERVER_BIN, PATH, /usr/sbin/nats-server): using NATS at ${c.config.natsUrl}, without NATS users.`,
    );
    return { servicePasswords: {} };
  }
  const password = () => `p${randomBytes(24).toString('hex')}`;
  const passwords: Record<string, string> = { NATS_CLI_PASSWORD: password() };
  for (const service of SERVICES) passwords[natsPasswordVariable(service)] = password();
  const server = await startNatsServer({
    binary,
    include: [join(REPO_ROOT, 'infra', 'nats', 'authorization.conf')],
    env: passwords,
    storeDir: join(stateDir, 'nats'),
    logFile: join(logDir, 'nats-server.log'),
    monitor: true,
  });
  c.useNats({ url: server.url, user: 'cli', password: passwords.NATS_CLI_PASSWORD });
  const { NATS_CLI_PASSWORD: _cli, ...servicePasswords } = passwords;
  return { server, servicePasswords };
}

/**
 * How to point an MCP client at the demo's gateway: the endpoint, the key, a configuration for a client that speaks
 * Streamable HTTP (the `mcpServers` shape desktop and IDE clients read) and the stdio relay's for one that only starts
 * local servers. Both act as the demo agent on the simulated phone.
 */
export function mcpClientLines(mcpUrl: string, apiKey: string): string[] {
  const http = {
    mcpServers: {
      ormuz: {
        type: 'http',
        url: mcpUrl,
        headers: { Authorization: `Bearer ${apiKey}`, 'Ormuz-Device': DEMO_DEVICE },
      },
    },
  };
  const stdio = {
    mcpServers: {
      ormuz: {
        command: 'npx',
        args: ['ormuz', 'mcp', '--key', apiKey, '--url', mcpUrl, '--device', DEMO_DEVICE],
      },
    },
  };
  return [
    `\nMCP: ${mcpUrl} serves agent ${DEMO_TENANT}/${DEMO_AGENT}'s governed tools (README, "MCP"), with this API key`,
    `(issued for this run, revoked when the demo stops):`,
    `  ${apiKey}`,
    `An MCP client that speaks Streamable HTTP, in its configuration:`,
    ...JSON.stringify(http, null, 2)
      .split('\n')
      .map((l) => `  ${l}`),
    `One that only starts local servers (stdio), run from this repository:`,
    `  npx ormuz mcp --key ${apiKey} --url ${mcpUrl} --device ${DEMO_DEVICE}`,
    ...JSON.stringify(stdio, null, 2)
      .split('\n')
      .map((l) => `  ${l}`),
  ];
}

/** The NATS users connected to the server, from its monitoring endpoint (`/connz?auth=true`), sorted. */
async function connectedUsers(monitorUrl: string): Promise<string[]> {
  const res = await fetch(`${monitorUrl}/connz?auth=true&limit=1024`, { signal: AbortSignal.timeout(5000) });
  const connz = (await res.json()) as { connections?: { authorized_user?: string }[] };
  return [...new Set((connz.connections ?? []).map((c) => c.authorized_user ?? '(none)'))].sort();
}

/**
 * `.ormuz/demo.env`: what the CLI in another shell needs to reach the demo's platform, as `export` lines for `source`
 * (values quoted for the shell). Without a NATS user the variables are unset, so that a user from an earlier demo's
 * file does not linger in that shell.
 */
export function demoEnvFile(
  settings: Pick<BaseConfig, 'natsUrl' | 'natsUser' | 'natsPassword' | 'namespace'>,
  token: string,
): string {
  const { natsUrl, natsUser, natsPassword, namespace } = settings;
  const q = (value: string) => `'${value.replaceAll("'", `'\\''`)}'`;
  return [
    '# Written by `ormuz demo --keep-running` for the CLI in another shell (`source` it); removed when the demo stops.',
    natsUser && natsPassword
      ? `export NATS_URL=${q(natsUrl)} NATS_USER=${q(natsUser)} NATS_PASSWORD=${q(natsPassword)}`
      : `export NATS_URL=${q(natsUrl)}; unset NATS_USER NATS_PASSWORD`,
    `export ORMUZ_NAMESPACE=${q(namespace)} ORMUZ_TOKEN=${q(token)}`,
    '',
  ].join('\n');
}

/** `path` as the user can type it: relative to the working directory when inside it. */
function shown(path: string): string {
  const rel = relative(process.cwd(), path);
  return rel && !rel.startsWith('..') && !isAbsolute(rel) ? rel : path;
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
  return {
    operator: await signDemoToken(c, ['operator'], 'operator', ttlSeconds),
    owner: await signDemoToken(c, ['owner'], 'owner', ttlSeconds),
  };
}

/** A token of tenant `demo` for `<name>@demo` with `roles`, from the development issuer. */
async function signDemoToken(c: CliContext, roles: Role[], name: string, ttlSeconds: number): Promise<string> {
  const { auth } = c.config;
  if (!auth.devIssuerDir) {
    throw new Error(
      `The demo signs in with the development issuer, but ORMUZ_AUTH_ISSUER names ${auth.issuer}: unset it.`,
    );
  }
  const issuer = await DevIssuer.open(auth.devIssuerDir);
  return issuer.sign({
    tenant: DEMO_TENANT,
    roles,
    subject: `${name}@${DEMO_TENANT}`,
    ttlSeconds,
    audience: auth.audience,
  });
}
