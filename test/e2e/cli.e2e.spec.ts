/**
 * The operator CLI against the real platform: the five services run as processes (as `ormuz demo` starts them) on a
 * fresh database and a random namespace, and every assertion goes through `node tools/cli/bin/ormuz.js --json …`,
 * the way `npx ormuz` runs. Submits target a device that is not connected, so authorized calls stay authorized.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { jest } from '@jest/globals';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { sql } from 'kysely';
import {
  assertValidReply,
  CONTEXTS,
  type CallStatusReplyV1,
  type ContextName,
  type OrmuzEvent,
  type RpcName,
  type RpcReplyOf,
} from '@ormuz/contracts';
import { streamName } from '@ormuz/event-log';
import { openDatabase } from '@ormuz/postgres';
import {
  createTestDatabase,
  randomNamespace,
  scratchFiles,
  testEnv,
  waitFor,
  type TestDatabase,
  testToken,
} from '@ormuz/testing';
import { SERVICES, stopAll, tailLog, type ServiceProcess } from '../../tools/cli/src/services.js';
import type { WhatIfReport } from '../../tools/cli/src/whatif/rejudge.js';
import { exitWithin, killAll, ROOT, spawnTracked } from './support/processes.js';
import { spawnPlatformServices, waitEveryReplica } from './support/replicas.js';

// Each test runs a few CLI processes (about 0.5 s each on an idle machine, ten times that on one loaded with other
// test runs); the bound only catches a hang.
jest.setTimeout(90_000);

const TENANT = 'acme';
const OTHER_TENANT = 'globex';
const DEVICE = 'phone-offline';
const MESSAGE_ARGS = { recipient: 'Alice', message_body: 'Running late' };

interface CliResult {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
  /** stdout parsed as one JSON value (undefined when it is not JSON). */
  readonly json: unknown;
  /** The `{ error: { code, message } }` the CLI prints with --json when a command fails. */
  readonly error: { code: string; message: string } | undefined;
}

const ndjson = (text: string): OrmuzEvent[] =>
  text
    .trimEnd()
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as OrmuzEvent);

describe('ormuz CLI against the running platform', () => {
  const { natsUrl } = testEnv();
  const namespace = randomNamespace('c');
  const logDir = mkdtempSync(join(tmpdir(), 'ormuz-cli-e2e-logs-'));
  let database: TestDatabase;
  let operatorToken = '';
  let nc: NatsConnection | undefined;
  let services: ServiceProcess[] = [];
  /** The bridge's device endpoint, as its health reports it (it listens on a free port). */
  let deviceUrl = '';

  /** Runs the CLI with --json against this file's namespace; bounded, so a hung command fails instead of hanging. */
  const ormuz = (...args: string[]): Promise<CliResult> => ormuzWithin(20_000, ...args);

  /** {@link ormuz} with its own bound, for commands that start processes themselves (`migrate` starts five). */
  async function ormuzWithin(timeoutMs: number, ...args: string[]): Promise<CliResult> {
    // Signed in as the operator of the tenant the command names (the tenant comes from the token).
    const at = args.indexOf('--tenant');
    const tenant = at >= 0 ? args[at + 1] : undefined;
    const token =
      tenant && tenant !== TENANT && /^[a-z0-9-]+$/.test(tenant)
        ? await testToken({ tenant, roles: ['operator', 'owner', 'analyst'], subject: `owner@${tenant}` })
        : operatorToken;
    return ormuzAs(token, timeoutMs, ...args);
  }

  /** Runs the CLI with --json signed in with `token`. */
  async function ormuzAs(token: string, timeoutMs: number, ...args: string[]): Promise<CliResult> {
    const t = spawnTracked(
      process.execPath,
      [join(ROOT, 'tools/cli/bin/ormuz.js'), '--json', '--nats', natsUrl, '--namespace', namespace, ...args],
      { DATABASE_URL: database.url, LOG_LEVEL: 'warn', ORMUZ_TOKEN: token },
    );
    const { code } = await exitWithin(t, timeoutMs, `ormuz ${args.join(' ')}`);
    let json: unknown;
    try {
      json = JSON.parse(t.stdout());
    } catch {
      json = undefined;
    }
    const error = (json as { error?: { code: string; message: string } } | undefined)?.error;
    return { code, stdout: t.stdout(), stderr: t.stderr(), json, error };
  }

  /** Runs the CLI and expects success; the failure message carries the command and its output. */
  async function ok<T>(...args: string[]): Promise<T> {
    const r = await ormuz(...args);
    if (r.code !== 0 || r.json === undefined) {
      throw new Error(`ormuz ${args.join(' ')} exited ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
    }
    return r.json as T;
  }

  /** {@link ok} for a command that prints a service's reply: it must be the reply the contracts declare for `name`. */
  async function okReply<N extends RpcName>(name: N, ...args: string[]): Promise<NoInfer<RpcReplyOf<N>>> {
    return assertValidReply(name, await ok<unknown>(...args));
  }

  const submit = (operationId: string, tool: string, args: unknown, tenant = TENANT) =>
    okReply(
      'policy.submit',
      'call',
      'submit',
      '--tenant',
      tenant,
      '--tool',
      tool,
      '--operation-id',
      operationId,
      '--device',
      DEVICE,
      '--args',
      JSON.stringify(args),
    );
  const status = (callId: string, tenant = TENANT) =>
    okReply('policy.status', 'call', 'status', '--tenant', tenant, '--call', callId, '--timeline');
  const types = (s: CallStatusReplyV1) => (s.timeline ?? []).map((t) => t.type.replace('ormuz.toolcall.', ''));

  /** The approvals inbox is a projection: poll it (through the CLI) until the approval is there. */
  const inboxShows = (approvalId: string) =>
    waitFor(
      async () => {
        const { approvals } = await okReply('approvals.list', 'approvals', 'list', '--tenant', TENANT, '--all');
        return approvals.find((a) => a.approval_id === approvalId);
      },
      { timeoutMs: 15_000, intervalMs: 50, message: `approval ${approvalId} in the inbox` },
    );

  beforeAll(async () => {
    // The CLI presents one person who operates the tenant and owns its approvals (recorded as the approver).
    operatorToken = await testToken({ tenant: TENANT, roles: ['operator', 'owner', 'analyst'], subject: 'owner@acme' });
    database = await createTestDatabase();
    nc = await connect({ servers: natsUrl, name: 'ormuz-cli-e2e' });
    const env = {
      NATS_URL: natsUrl,
      DATABASE_URL: database.url,
      ORMUZ_NAMESPACE: namespace,
      APPROVALS_PORT: '0',
      MCP_GATEWAY_PORT: '0',
      DEVICE_BRIDGE_PORT: '0',
      DEVICE_TOKENS: `${TENANT}:phone-1:cli-e2e-token`,
      LOG_LEVEL: 'info',
    };
    // One process per service, or ORMUZ_E2E_REPLICAS of each (support/replicas.ts).
    services = spawnPlatformServices(env, logDir);
    try {
      // Six Node processes booting at once: on a busy two-core machine that alone has taken over 40 s.
      const health = await waitEveryReplica(nc, namespace, services, 120_000);
      deviceUrl = health['device-bridge']?.endpoints['devices'] ?? '';
    } catch (err) {
      throw new Error(`${(err as Error).message}\n${services.map((p) => `--- ${p.name}\n${tailLog(p)}`).join('\n')}`);
    }
  }, 150_000);

  afterAll(async () => {
    await stopAll(services, 5_000);
    for (const p of services) if (!p.exited) p.child.kill('SIGKILL');
    await killAll();
    // The streams of this file's namespace live on the shared server: remove them.
    if (nc) {
      const jsm = await jetstreamManager(nc);
      for (const context of Object.keys(CONTEXTS) as ContextName[]) {
        await jsm.streams.delete(streamName(namespace, context)).catch(() => undefined);
      }
    }
    await nc?.close();
    await database?.drop();
    rmSync(logDir, { recursive: true, force: true });
  }, 30_000);

  describe('call submit', () => {
    it('authorizes a low-risk tool and stages a high-risk one with an approval id', async () => {
      const [low, high] = await Promise.all([
        submit('op-low-1', 'device.screen_observe', {}),
        submit('op-high-1', 'device.send_message', MESSAGE_ARGS),
      ]);
      expect(low).toMatchObject({ status: 'authorized', duplicate: false, approval_id: null });
      expect(low.call_id).toMatch(/^call_[0-9a-f]{32}$/);
      expect(low.payload_sha256).toMatch(/^[0-9a-f]{64}$/);

      expect(high).toMatchObject({
        status: 'staged',
        duplicate: false,
        summary: 'Send a text message to Alice: "Running late"',
      });
      expect(high.approval_id).toMatch(/^apr_[0-9a-f]{32}$/);
      expect(high.message).toMatch(/^pending_confirmation/);
      expect(Date.parse(high.expires_at ?? '')).toBeGreaterThan(Date.now());
    });

    it('observes the original on a duplicate submit and records nothing new', async () => {
      const first = await submit('op-dup-1', 'device.send_message', MESSAGE_ARGS);
      const before = await status(first.call_id);
      // Keys in another order are the same canonical bytes.
      const again = await submit('op-dup-1', 'device.send_message', {
        message_body: 'Running late',
        recipient: 'Alice',
      });
      expect(again).toEqual({ ...first, duplicate: true });
      const after = await status(first.call_id);
      expect(after.version).toBe(before.version);
      expect(types(after)).toEqual(['requested.v1', 'staged.v1']);
    });

    it('refuses the same operation id with other arguments as a conflict naming the call id', async () => {
      const first = await submit('op-conflict-1', 'device.send_message', MESSAGE_ARGS);
      const r = await ormuz(
        'call',
        'submit',
        '--tenant',
        TENANT,
        '--tool',
        'device.send_message',
        '--operation-id',
        'op-conflict-1',
        '--device',
        DEVICE,
        '--args',
        JSON.stringify({ ...MESSAGE_ARGS, message_body: 'Running very late' }),
      );
      expect(r.code).not.toBe(0);
      expect(r.error?.code).toBe('payload_conflict');
      expect(r.error?.message).toContain(first.call_id);
      expect(types(await status(first.call_id))).toEqual(['requested.v1', 'staged.v1']);
    });
  });

  it('call status --timeline reads the call and its events from the log', async () => {
    const high = await submit('op-status-1', 'device.send_message', MESSAGE_ARGS);
    const s = await status(high.call_id);
    expect(s.status).toMatchObject({
      status: 'staged',
      call_id: high.call_id,
      tool: 'device.send_message',
      pending_approval: { approval_id: high.approval_id },
    });
    expect(types(s)).toEqual(['requested.v1', 'staged.v1']);
    expect(s.timeline?.map((t) => t.source)).toEqual(['/ormuz/policy', '/ormuz/policy']);
    // Recorded together: the request and the gate's decision are one message, so they share its sequence.
    expect(s.timeline?.[1]?.seq).toBe(s.timeline?.[0]?.seq);
  });

  describe('approvals', () => {
    it('lists the pending approval, and approve authorizes the call recording who decided', async () => {
      const high = await submit('op-approve-1', 'device.send_message', MESSAGE_ARGS);
      const approvalId = high.approval_id!;
      await inboxShows(approvalId);
      const pending = await okReply('approvals.list', 'approvals', 'list', '--tenant', TENANT);
      expect(pending.approvals.find((a) => a.approval_id === approvalId)).toMatchObject({
        call_id: high.call_id,
        status: 'pending',
        decided_by: null,
      });

      const decided = await okReply('approvals.approve', 'approvals', 'approve', approvalId, '--tenant', TENANT);
      expect(decided).toMatchObject({ approval_id: approvalId, status: 'approved', decided_by: 'owner@acme' });
      const s = await status(high.call_id);
      expect(s.status.status).toBe('authorized');
      expect(types(s)).toEqual(['requested.v1', 'staged.v1', 'approved.v1', 'authorized.v1']);
    });

    it('deny records the denial with who decided, and the call never runs', async () => {
      const high = await submit('op-deny-1', 'device.send_message', MESSAGE_ARGS);
      await inboxShows(high.approval_id!);
      const decided = await okReply(
        'approvals.deny',
        'approvals',
        'deny',
        high.approval_id!,
        '--tenant',
        TENANT,
        '--reason',
        'not today',
      );
      expect(decided).toMatchObject({ status: 'denied', decided_by: 'owner@acme' });
      const s = await status(high.call_id);
      expect(s.status.status).toBe('denied');
      expect(types(s)).toEqual(['requested.v1', 'staged.v1', 'denied.v1']);
    });

    it('refuses to approve a staged call that was sealed before it started', async () => {
      const high = await submit('op-seal-1', 'device.send_message', MESSAGE_ARGS);
      await inboxShows(high.approval_id!);
      const sealed = await okReply(
        'policy.seal',
        'call',
        'seal',
        '--tenant',
        TENANT,
        '--call',
        high.call_id,
        '--reason',
        'wrong recipient',
      );
      expect(sealed).toMatchObject({ status: 'sealed', sealed_by: 'owner@acme' });

      const r = await ormuz('approvals', 'approve', high.approval_id!, '--tenant', TENANT);
      expect(r.code).not.toBe(0);
      expect(r.error).toEqual({
        code: 'call_sealed',
        message: expect.stringContaining(`${high.call_id} was sealed by owner@acme`),
      });
      const s = await status(high.call_id);
      expect(s.status.status).toBe('sealed');
      expect(types(s)).toEqual(['requested.v1', 'staged.v1', 'sealed.v1']);
    });
  });

  it("events tail prints one tenant's CloudEvents as NDJSON and nothing of another tenant", async () => {
    const [mine, theirs] = await Promise.all([
      submit('op-tail-1', 'device.screen_observe', {}),
      submit('op-tail-1', 'device.screen_observe', {}, OTHER_TENANT),
    ]);
    // The same operation id in two tenants is two calls.
    expect(theirs.call_id).not.toBe(mine.call_id);

    // The archive is a projection of the log: ask until it holds both calls' events.
    const tails = () =>
      Promise.all([ormuz('events', 'tail', '--tenant', TENANT), ormuz('events', 'tail', '--tenant', OTHER_TENANT)]);
    const [tail, otherTail] = await waitFor(
      async () => {
        const [a, b] = await tails();
        const archived = (t: CliResult, callId: string) =>
          ndjson(t.stdout).filter((e) => e.subject === callId).length === 2;
        return archived(a, mine.call_id) && archived(b, theirs.call_id) ? ([a, b] as const) : undefined;
      },
      { timeoutMs: 30_000, message: "both tenants' calls in the audit archive" },
    );
    expect(tail.code).toBe(0);
    const events = ndjson(tail.stdout);
    expect(events.length).toBeGreaterThanOrEqual(2);
    for (const e of events) {
      expect(e).toMatchObject({ specversion: '1.0', tenant: TENANT, datacontenttype: 'application/json' });
      expect(e.type).toMatch(/^ormuz\.[a-z_.]+\.v\d+$/);
      expect(typeof e.id).toBe('string');
      expect(Number.isNaN(Date.parse(e.time))).toBe(false);
    }
    expect(events.filter((e) => e.subject === mine.call_id).map((e) => e.type)).toEqual([
      'ormuz.toolcall.requested.v1',
      'ormuz.toolcall.authorized.v1',
    ]);
    expect(tail.stdout).not.toContain(theirs.call_id);
    expect(tail.stdout).not.toContain(OTHER_TENANT);

    expect(otherTail.code).toBe(0);
    const others = ndjson(otherTail.stdout);
    expect(new Set(others.map((e) => e.tenant))).toEqual(new Set([OTHER_TENANT]));
    expect(others.map((e) => e.subject)).toEqual([theirs.call_id, theirs.call_id]);
  });

  it('audit verify re-computes the archive chain, and exits 3 naming the first broken link', async () => {
    await submit('op-verify-1', 'device.screen_observe', {});
    const verified = await waitFor(
      async () => {
        const r = await ormuz('audit', 'verify', '--tenant', TENANT);
        return r.code === 0 && (r.json as { events: number }).events > 0 && r;
      },
      { timeoutMs: 30_000, message: "the tenant's calls in the audit archive" },
    );
    expect(verified.json).toMatchObject({ tenant: TENANT, verified: true, broken: null });

    // Someone with the owner's rights changes an archived row behind the archive's back, then puts it back.
    const db = await openDatabase({ url: database.url });
    const tamper = (suffix: string) =>
      sql`update audit.events set source = regexp_replace(source, '!?$', ${suffix})
          where tenant = ${TENANT} and chain_pos = 1 returning id`.execute(db);
    try {
      const { rows } = await tamper('!');
      const broken = await ormuz('audit', 'verify', '--tenant', TENANT);
      expect(broken.code).toBe(3);
      expect(broken.json).toMatchObject({
        verified: false,
        broken: { position: 1, event_id: (rows[0] as { id: string }).id, reason: 'row_hash' },
      });
      await tamper('');
      expect((await ormuz('audit', 'verify', '--tenant', TENANT)).code).toBe(0);
    } finally {
      await db.destroy();
    }
  });

  it('device credentials: issue shows the token once, rotate ends the old one, revoke ends the rest', async () => {
    const credentials = <C extends 'issue' | 'rotate' | 'list' | 'revoke'>(command: C, ...args: string[]) =>
      okReply(`device-bridge.credentials.${command}`, 'device', 'credentials', command, '--tenant', TENANT, ...args);
    const first = await credentials('issue', '--device', 'phone-9', '--ttl', '3600');
    expect(first.token).toMatch(/^odt_/);
    expect(first.credential.state).toBe('active');
    const second = await credentials('rotate', '--device', 'phone-9', '--grace', '0');
    const listed = await credentials('list', '--device', 'phone-9');
    expect(JSON.stringify(listed)).not.toContain(first.token);
    expect(Object.fromEntries(listed.credentials.map((c) => [c.credential_id, c.state]))).toEqual({
      [first.credential.credential_id]: 'expired',
      [second.credential.credential_id]: 'active',
    });
    expect(await credentials('revoke', '--device', 'phone-9')).toEqual({
      revoked: [first.credential.credential_id, second.credential.credential_id].sort(),
    });
    const bad = await ormuz('device', 'credentials', 'issue', '--tenant', TENANT, '--device', 'phone-9', '--ttl', '5');
    expect(bad.code).not.toBe(0);
    expect(bad.stderr + bad.stdout).toContain('--ttl');
    expect(await okReply('device-bridge.devices', 'device', 'list', '--tenant', TENANT)).toEqual({ devices: [] });
  });

  it('keys: issue shows the key once, rotate ends the old one, revoke ends the rest, list never shows a key', async () => {
    const keys = <C extends 'issue' | 'rotate' | 'list' | 'revoke'>(command: C, ...args: string[]) =>
      okReply(`policy.keys.${command}`, 'keys', command, '--tenant', TENANT, ...args);
    const first = await keys('issue', '--agent', 'agent-k', '--label', 'e2e');
    expect(first.api_key).toMatch(/^ormz_[0-9a-f]{16}_/);
    expect(first.key).toMatchObject({ agent_id: 'agent-k', label: 'e2e', state: 'active' });
    const second = await keys('rotate', '--agent', 'agent-k', '--grace', '0');
    const listed = await keys('list', '--agent', 'agent-k');
    expect(JSON.stringify(listed)).not.toContain(first.api_key.slice(22));
    expect(Object.fromEntries(listed.keys.map((k) => [k.key_id, k.state]))).toEqual({
      [first.key.key_id]: 'expired',
      [second.key.key_id]: 'active',
    });
    expect(await keys('revoke', '--agent', 'agent-k')).toEqual({
      revoked: [first.key.key_id, second.key.key_id].sort(),
    });
    const missing = await ormuz(
      'keys',
      'revoke',
      '--tenant',
      OTHER_TENANT,
      '--agent',
      'agent-k',
      '--key',
      first.key.key_id,
    );
    expect(missing.code).not.toBe(0);
    expect(missing.error).toMatchObject({ code: 'api_key_not_found' });
  });

  it("tools payload counts an agent's first-turn tools per tier in the model's tokens, from policy's offered tools", async () => {
    await ok('grants', 'set', '--tenant', TENANT, '--agent', 'payload-agent', '--allow', 'device');
    const report = await ok<{
      family: string;
      small: { total: number; tools: { name: string; reason: string }[] };
      large: { total: number; tools: { name: string }[]; directory: number };
    }>('tools', 'payload', '--tenant', TENANT, '--agent', 'payload-agent', '--model', 'openai:gpt-4o-mini');
    expect(report.family).toBe('o200k');
    // The device extension alone: the discovery tools come with the grant, and fit the small tier's 1,000 tokens.
    expect(report.small.tools.map((t) => t.name)).toContain('ormuz__search_tools');
    expect(report.small.total).toBeLessThanOrEqual(1_000);
    expect(report.large.tools.length).toBeGreaterThan(report.small.tools.length);
    expect(report.large).toMatchObject({ directory: 0 });
    expect(report.large.total).toBeGreaterThan(report.small.total);
    const bad = await ormuz('tools', 'payload', '--tenant', TENANT, '--agent', 'payload-agent', '--model', 'gpt-4o');
    expect(bad.code).not.toBe(0);
    expect(bad.stderr + bad.stdout).toContain('<provider>:<model>');
  });

  it('webhooks: set shows the secret once, list never shows it, deliveries reads the log, private URLs are refused', async () => {
    const hooks = <C extends 'set' | 'list' | 'remove' | 'deliveries'>(command: C, ...args: string[]) =>
      okReply(`approvals.webhooks.${command}`, 'webhooks', command, '--tenant', TENANT, ...args);
    // A public address (TEST-NET-3), disabled: nothing is sent, and no name has to resolve.
    const created = await hooks(
      'set',
      '--url',
      'https://203.0.113.10/ormuz',
      '--events',
      'staged,decided',
      '--disable',
      '--description',
      'e2e',
    );
    expect(created.secret).toMatch(/^whsec_/);
    expect(created.webhook).toMatchObject({ events: ['staged', 'decided'], enabled: false, description: 'e2e' });
    const id = created.webhook.webhook_id;
    const listed = await hooks('list');
    expect(listed.webhooks.map((w) => w.webhook_id)).toContain(id);
    expect(JSON.stringify(listed)).not.toContain(created.secret!);
    expect(await hooks('deliveries', '--webhook', id, '--status', 'failed', '--limit', '5')).toEqual({
      deliveries: [],
    });
    // The services run without ORMUZ_WEBHOOKS_ALLOW_PRIVATE: a loopback URL is refused, saying why.
    const refused = await ormuz('webhooks', 'set', '--tenant', TENANT, '--url', 'http://127.0.0.1:9/hook');
    expect(refused.code).not.toBe(0);
    expect(refused.error).toMatchObject({
      code: 'invalid_webhook',
      message: expect.stringContaining('127.0.0.1 is a loopback address'),
    });
    expect((await hooks('remove', '--webhook', id)).webhook_id).toBe(id);
    // Five CLI runs, each a process of its own: bounded like the other multi-command tests here.
  }, 60_000);

  it('device simulate says plainly that the bridge refused its token, and exits non-zero', async () => {
    const run = spawnTracked(process.execPath, [
      join(ROOT, 'tools/cli/bin/ormuz.js'),
      'device',
      'simulate',
      '--url',
      deviceUrl,
      '--tenant',
      TENANT,
      '--device',
      'phone-1',
      '--token',
      'bad',
      '--journal',
      join(logDir, 'journal-bad-token'),
    ]);
    const { code } = await exitWithin(run, 15_000, 'device simulate with a bad token');
    expect(code).not.toBe(0);
    expect(run.stderr()).toContain(`refused the credential of device ${TENANT}/phone-1 (unauthenticated)`);
    expect(run.stderr()).toContain('ormuz device credentials issue');
    expect(run.stdout()).not.toContain('serving');
  });

  it('device simulate with a good token says serving once the bridge welcomed it', async () => {
    const run = spawnTracked(process.execPath, [
      join(ROOT, 'tools/cli/bin/ormuz.js'),
      'device',
      'simulate',
      '--url',
      deviceUrl,
      '--tenant',
      TENANT,
      '--device',
      'phone-1',
      '--token',
      'cli-e2e-token',
      '--journal',
      join(logDir, 'journal-simulate'),
    ]);
    await waitFor(() => run.stdout().includes(`${TENANT}/phone-1 serving`), { message: 'serving', timeoutMs: 15_000 });
    run.child.kill('SIGINT');
    expect((await exitWithin(run, 10_000, 'device simulate after Ctrl-C')).code).toBe(0);
  });

  it('migrate applies every schema and declares the streams, and is safe to run again', async () => {
    // migrate starts all six services at once, each to migrate and exit: minutes on a loaded machine.
    const run = await ormuzWithin(150_000, 'migrate');
    if (run.code !== 0)
      throw new Error(`ormuz migrate exited ${run.code}\nstdout: ${run.stdout}\nstderr: ${run.stderr}`);
    const r = run.json as { results: { service: string; ok: boolean; output: string }[] };
    expect(r.results.map((x) => x.service).sort()).toEqual([...SERVICES].sort());
    for (const result of r.results) {
      expect(result).toMatchObject({
        ok: true,
        output: expect.stringMatching(
          /^[a-z-]+: (schema [a-z_]+|schemas [a-z_]+(, [a-z_]+)+) of database \S+ \(namespace \w+\) (is|are) up to date$/,
        ),
      });
    }
  }, 180_000);

  it("migrate in another namespace refuses this platform's database, naming both namespaces", async () => {
    const other = randomNamespace('o');
    // The later --namespace wins: the same database, another namespace.
    const r = await ormuzWithin(150_000, '--namespace', other, 'migrate');
    expect(r.code).toBe(1);
    const { results } = r.json as { results: { service: string; ok: boolean; output: string }[] };
    for (const result of results) {
      expect(result.ok).toBe(false);
      expect(result.output).toContain(`belongs to namespace ${namespace}, not ${other}`);
    }
  }, 180_000);

  describe('time travel and what if', () => {
    // Each case runs several CLI processes, each a second or more on a loaded machine.
    const CASE_MS = 180_000;
    const TT_TENANT = 'initech';
    const candidates = scratchFiles('ormuz-whatif-');
    afterAll(() => candidates.remove());
    const candidate = (name: string, content: unknown) => candidates.write(name, content);

    it(
      'call status --as-of shows the call as it stood then, and as of now the live status',
      async () => {
        const high = await submit('op-asof-1', 'device.send_message', MESSAGE_ARGS);
        await inboxShows(high.approval_id!);
        await okReply('approvals.approve', 'approvals', 'approve', high.approval_id!, '--tenant', TENANT);
        const live = await status(high.call_id);
        const [requested, , approved] = live.timeline!;
        expect(Date.parse(approved!.time)).toBeGreaterThan(Date.parse(requested!.time));

        const asOf = (t: string) =>
          okReply(
            'policy.status',
            'call',
            'status',
            '--tenant',
            TENANT,
            '--call',
            high.call_id,
            '--timeline',
            '--as-of',
            t,
          );
        // Between the request and the approval, by time and by sequence: still staged, approval pending.
        const [byTime, bySeq, now] = await Promise.all([
          asOf(requested!.time),
          asOf(String(requested!.seq)),
          asOf(new Date().toISOString()),
        ]);
        for (const then of [byTime, bySeq]) {
          expect(then.status).toMatchObject({ status: 'staged', pending_approval: { approval_id: high.approval_id } });
          expect(types(then)).toEqual(['requested.v1', 'staged.v1']);
          expect(then.version).toBe(requested!.seq);
        }
        expect(now).toEqual(live);
      },
      CASE_MS,
    );

    it(
      'call status --as-of refuses a time in the future and finds no call of another tenant',
      async () => {
        const mine = await submit('op-asof-2', 'device.screen_observe', {});
        const future = await ormuz(
          'call',
          'status',
          '--tenant',
          TENANT,
          '--call',
          mine.call_id,
          '--as-of',
          '2999-01-01T00:00:00Z',
        );
        expect(future.code).toBe(1);
        expect(future.error).toEqual({ code: 'invalid_input', message: expect.stringContaining('is in the future') });
        const now = new Date().toISOString();
        const foreign = await ormuz('call', 'status', '--tenant', OTHER_TENANT, '--call', mine.call_id, '--as-of', now);
        expect(foreign.code).toBe(1);
        expect(foreign.error?.code).toBe('call_not_found');
      },
      CASE_MS,
    );

    it(
      'whatif prints the past calls candidate rules would decide otherwise, with counts per tool and reason',
      async () => {
        const submitIn = (op: string, tool: string, args: unknown) => submit(op, tool, args, TT_TENANT);
        const [tap, message] = await Promise.all([
          submitIn('op-wi-tap', 'device.tap', {
            foreground_package: 'com.example.notes',
            ref: 'r7',
            target_text: 'Zorble',
          }),
          submitIn('op-wi-msg', 'device.send_message', MESSAGE_ARGS),
        ]);
        expect([tap.status, message.status]).toEqual(['authorized', 'staged']);
        const analyst = await testToken({ tenant: TT_TENANT, roles: ['analyst'], subject: `analyst@${TT_TENANT}` });
        const whatif = async (...args: string[]) => {
          const r = await ormuzAs(analyst, 20_000, 'whatif', '--tenant', TT_TENANT, ...args);
          if (r.code !== 0) throw new Error(`ormuz whatif exited ${r.code}\n${r.stdout}\n${r.stderr}`);
          return r.json as WhatIfReport;
        };
        // The archive is a projection of the log: ask until it holds both requests. The current rules change nothing.
        const baseline = await waitFor(async () => ((r) => (r.judged === 2 ? r : undefined))(await whatif()), {
          timeoutMs: 60_000,
          intervalMs: 100,
          message: 'both requests in the archive',
        });
        expect(baseline.changed).toEqual([]);

        const lexicon = candidate('lexicon.json', {
          extra_words: [{ meaning: 'pay', language: 'en', words: ['zorble'] }],
        });
        const grants = candidate('grants.json', { '*': { allow: ['device'], deny: ['device.send_message'] } });
        const report = await whatif('--risk-lexicon', lexicon, '--grants', grants);
        expect(report.judged).toBe(2);
        // In log order; the two were submitted at once, so either may be first.
        expect(report.changed.map((c) => [c.call_id, c.tool, c.from, c.to, c.reason])).toEqual(
          expect.arrayContaining([
            [tap.call_id, 'device.tap', 'authorized', 'staged', 'risk_high'],
            [message.call_id, 'device.send_message', 'staged', 'refused', 'not_offered'],
          ]),
        );
        expect(report.changed).toHaveLength(2);
        expect(report.counts).toEqual([
          { tool: 'device.send_message', from: 'staged', to: 'refused', reason: 'not_offered', calls: 1 },
          { tool: 'device.tap', from: 'authorized', to: 'staged', reason: 'risk_high', calls: 1 },
        ]);
        // Read-only: the calls are as they were.
        const [tapNow, messageNow] = await Promise.all([
          status(tap.call_id, TT_TENANT),
          status(message.call_id, TT_TENANT),
        ]);
        expect([tapNow.status.status, messageNow.status.status]).toEqual(['authorized', 'staged']);

        // A range by sequence holds only the request recorded there.
        const seq = messageNow.timeline![0]!.seq;
        const one = await whatif(
          '--risk-lexicon',
          lexicon,
          '--grants',
          grants,
          '--from',
          String(seq),
          '--to',
          String(seq),
        );
        expect(one.changed.map((c) => c.call_id)).toEqual([message.call_id]);

        // The human form names the transition and the count.
        const human = spawnTracked(
          process.execPath,
          [
            join(ROOT, 'tools/cli/bin/ormuz.js'),
            '--nats',
            natsUrl,
            '--namespace',
            namespace,
            'whatif',
            '--tenant',
            TT_TENANT,
            '--risk-lexicon',
            lexicon,
          ],
          { DATABASE_URL: database.url, LOG_LEVEL: 'warn', ORMUZ_TOKEN: analyst },
        );
        expect((await exitWithin(human, 20_000, 'ormuz whatif')).code).toBe(0);
        expect(human.stdout()).toContain('2 past request(s) judged, 1 decision(s) would change');
        expect(human.stdout()).toContain('1  device.tap  authorized → staged  (risk_high)');
      },
      CASE_MS,
    );

    it(
      'whatif refuses --from after --to and a malformed candidate file, and reads no other tenant',
      async () => {
        const broken = candidate('broken-grants.json', { cli: { allow: 'device' } });
        const [reversed, malformed, empty, foreign] = await Promise.all([
          ormuz('whatif', '--tenant', TT_TENANT, '--from', '2026-05-02T00:00:00Z', '--to', '2026-05-01T00:00:00Z'),
          ormuz('whatif', '--tenant', TT_TENANT, '--grants', broken),
          // A tenant with no events: nothing to judge, and that is no error.
          ormuz('whatif', '--tenant', 'hooli'),
          // Another tenant's history is refused, never read.
          ormuzAs(operatorToken, 20_000, 'whatif', '--tenant', TT_TENANT),
        ]);
        expect(reversed.code).toBe(1);
        expect(reversed.error).toEqual({
          code: 'invalid_input',
          message: '--from is after --to; give the earlier point first.',
        });
        expect(malformed.code).toBe(1);
        expect(malformed.error).toEqual({
          code: 'invalid_input',
          message: `${broken}: the grant of "cli": "allow" must be a list of rules.`,
        });
        expect({ code: empty.code, json: empty.json }).toEqual({
          code: 0,
          json: { judged: 0, changed: [], counts: [] },
        });
        expect(foreign.code).toBe(1);
        expect(foreign.error?.code).toBe('forbidden');
      },
      CASE_MS,
    );
  });

  describe('bad input', () => {
    it("refuses an operation id with a '.', '*', '>' or space, naming the option and the character", async () => {
      const cases = [
        ['op.1', "'.'"],
        ['op*', "'*'"],
        ['op>', "'>'"],
        ['op 1', 'whitespace'],
      ] as const;
      const results = await Promise.all(
        cases.map(([operationId]) =>
          ormuz('call', 'submit', '--tenant', TENANT, '--tool', 'device.screen_observe', '--operation-id', operationId),
        ),
      );
      results.forEach((r, i) => {
        const [operationId, named] = cases[i]!;
        expect({ operationId, code: r.code, error: r.error?.code }).toEqual({
          operationId,
          code: 1,
          error: 'invalid_identifier',
        });
        expect(r.error?.message).toContain(`--operation-id ${JSON.stringify(operationId)} is not a valid identifier`);
        expect(r.error?.message).toContain(`it contains ${named}`);
      });
    });

    it('refuses unsafe tenant, call, device and approval ids on every command', async () => {
      const cases: [string[], string][] = [
        [['approvals', 'list', '--tenant', 'ac.me'], '--tenant "ac.me"'],
        [['call', 'status', '--tenant', TENANT, '--call', 'call 1'], '--call "call 1"'],
        [['call', 'seal', '--tenant', TENANT, '--call', 'call_*'], '--call "call_*"'],
        [
          [
            'call',
            'submit',
            '--tenant',
            TENANT,
            '--tool',
            'device.screen_observe',
            '--operation-id',
            'op-1',
            '--device',
            'phone.1',
          ],
          '--device "phone.1"',
        ],
        [['approvals', 'approve', 'apr_>', '--tenant', TENANT], '<approval-id> "apr_>"'],
        [['events', 'tail', '--tenant', 'acme*'], '--tenant "acme*"'],
      ];
      const results = await Promise.all(cases.map(([args]) => ormuz(...args)));
      results.forEach((r, i) => {
        expect({ args: cases[i]![0], code: r.code, error: r.error?.code }).toEqual({
          args: cases[i]![0],
          code: 1,
          error: 'invalid_identifier',
        });
        expect(r.error?.message).toContain(cases[i]![1]);
      });
    });

    it('refuses malformed --args JSON, and arguments that are not an object, with the fix', async () => {
      const base = [
        'call',
        'submit',
        '--tenant',
        TENANT,
        '--tool',
        'device.send_message',
        '--operation-id',
        'op-bad-args',
      ];
      const human = spawnTracked(process.execPath, [
        join(ROOT, 'tools/cli/bin/ormuz.js'),
        '--nats',
        natsUrl,
        '--namespace',
        namespace,
        ...base,
        '--args',
        '{',
      ]);
      const [malformed, notObject] = await Promise.all([
        ormuz(...base, '--args', '{recipient: Alice}'),
        ormuz(...base, '--args', '["Alice"]'),
      ]);
      expect(malformed.code).toBe(1);
      expect(malformed.error).toEqual({
        code: 'invalid_input',
        message: expect.stringMatching(/^--args is not valid JSON \(.+\)\. Quote it/),
      });
      expect(notObject.code).toBe(1);
      expect(notObject.error).toEqual({
        code: 'invalid_input',
        message: expect.stringContaining('--args must be a JSON object'),
      });
      // Without --json the error is one line on stderr.
      expect((await exitWithin(human, 20_000, 'ormuz without --json')).code).toBe(1);
      expect(human.stdout()).toBe('');
      expect(human.stderr()).toMatch(/^ormuz: --args is not valid JSON .*\n$/);
      // Nothing reached the log.
      const tail = await ormuz('events', 'tail', '--tenant', TENANT);
      expect(tail.stdout).not.toContain('op-bad-args');
    });
  });
});
