/**
 * Webhooks end to end: a real HTTP receiver (node:http on a port of its own) is told of staged, decided and expired
 * approvals by the approvals service running on the real NATS and Postgres; the receiver checks signatures the way
 * the README tells receivers to, with nothing from Ormuz.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { sql, type Kysely } from 'kysely';
import type { Role } from '@ormuz/auth';
import type { ApprovalWebhookV1, RpcName, RpcRequestOf, WebhookDeliveryViewV1 } from '@ormuz/contracts';
import { streamName } from '@ormuz/event-log';
import { openDatabase } from '@ormuz/postgres';
import { callRpc } from '@ormuz/service-kit';
import { bearerFor, waitFor } from '@ormuz/testing';
import { APPROVALS_SCHEMA, WEBHOOK_REACTION } from '../src/index.js';
import { ApprovalsUnderTest } from './approvals-under-test.js';
import { stageCall } from './support/calls.js';

/** What a receiver does with `Ormuz-Signature` (README, "Webhooks"): recompute, compare in constant time, bound the age. */
function verifies(header: string | undefined, rawBody: string, secret: string, toleranceSeconds = 300): boolean {
  const fields = new Map((header ?? '').split(',').map((part) => part.split('=', 2) as [string, string]));
  const t = Number(fields.get('t'));
  if (!Number.isInteger(t) || Math.abs(Date.now() / 1000 - t) > toleranceSeconds) return false;
  const expected = createHmac('sha256', secret).update(`${t}.${rawBody}`).digest();
  const given = Buffer.from(fields.get('v1') ?? '', 'hex');
  return given.length === expected.length && timingSafeEqual(given, expected);
}

interface Received {
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
  /** The status the receiver answered. */
  readonly answered: number;
}

/** How the receiver answers the `n`th request (1-based) on one path; `hangUp` closes the connection instead. */
type Answer = (n: number) => {
  readonly status: number;
  readonly headers?: Record<string, string>;
  readonly hangUp?: boolean;
};
const ok: Answer = () => ({ status: 200 });
const SECRET_KEY = randomBytes(32).toString('base64');

describe('approvals webhooks', () => {
  const app = new ApprovalsUnderTest('hooks', {
    APPROVAL_SWEEP_MS: '100',
    WEBHOOK_POLL_MS: '50',
    WEBHOOK_BACKOFF_MS: '50',
    WEBHOOK_BACKOFF_MAX_MS: '200',
    WEBHOOK_MAX_ATTEMPTS: '4',
    WEBHOOK_TIMEOUT_MS: '5000',
    // The receiver listens on 127.0.0.1; the guard itself has a test of its own below, on a service without this.
    ORMUZ_WEBHOOKS_ALLOW_PRIVATE: 'true',
    // Signing secrets are sealed at rest: every test here signs with secrets read back through the key.
    ORMUZ_WEBHOOKS_SECRET_KEY: SECRET_KEY,
  });
  const ns = app.namespace;
  let db: Kysely<unknown>;
  let receiver: Server;
  let base: string;
  const received: Received[] = [];
  const answers = new Map<string, Answer>();

  const as = async <N extends RpcName>(
    tenant: string,
    roles: readonly Role[],
    name: N,
    body: NoInfer<RpcRequestOf<N>>,
  ) =>
    callRpc(app.nc, ns, name, body, {
      credential: await bearerFor(tenant, roles, `someone@${tenant}`),
      checkReply: true,
    });
  const refusal = (promise: Promise<unknown>) =>
    promise.then(
      () => 'accepted',
      (err: { code?: string }) => err.code,
    );
  const at = (path: string) => received.filter((r) => r.path === path);
  const register = async (tenant: string, path: string) =>
    as(tenant, ['operator'], 'approvals.webhooks.set', { tenant, url: `${base}${path}` });
  const deliveries = async (tenant: string) =>
    (await as(tenant, ['operator'], 'approvals.webhooks.deliveries', { tenant })).deliveries;
  /** The tenant's one delivery, once `done` says it is where the test wants it. */
  const deliveryOnce = (tenant: string, done: (d: WebhookDeliveryViewV1) => boolean, what: string) =>
    waitFor(
      async () => {
        const all = await deliveries(tenant);
        return all.length === 1 && done(all[0]!) ? all[0]! : undefined;
      },
      { message: what },
    );

  beforeAll(async () => {
    receiver = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const path = req.url ?? '/';
        const answer = (answers.get(path) ?? ok)(at(path).length + 1);
        received.push({
          path,
          headers: req.headers,
          body: Buffer.concat(chunks).toString('utf8'),
          answered: answer.status,
        });
        if (answer.hangUp) req.socket.destroy();
        else res.writeHead(answer.status, answer.headers).end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(receiver.address() as { port: number }).port}`;
    await app.open();
    db = await openDatabase({ url: app.database.url });
  });
  afterAll(async () => {
    await db?.destroy();
    await app.close();
    receiver?.closeAllConnections();
    await new Promise((resolve) => receiver?.close(resolve));
  });

  it('signs each webhook with the secret shown once at registration; the receiver verifies it', async () => {
    const tenant = 'hooks_sign';
    const { webhook, secret } = await register(tenant, '/sign');
    expect(secret).toMatch(/^whsec_/);
    expect(webhook).toMatchObject({ events: ['staged', 'decided', 'expired'], enabled: true });
    const listed = await as(tenant, ['operator'], 'approvals.webhooks.list', { tenant });
    expect(listed.webhooks).toEqual([webhook]);
    expect(JSON.stringify(listed)).not.toContain(secret!);

    const call = await stageCall(app.policy, tenant, 'op-sign');
    await waitFor(() => at('/sign').length === 1, { message: 'the staged webhook' });
    const [staged] = at('/sign');
    expect(verifies(staged!.headers['ormuz-signature'] as string, staged!.body, secret!)).toBe(true);
    expect(verifies(staged!.headers['ormuz-signature'] as string, staged!.body, `${secret}x`)).toBe(false);
    expect(verifies(staged!.headers['ormuz-signature'] as string, `${staged!.body} `, secret!)).toBe(false);
    expect(staged!.headers).toMatchObject({
      'content-type': 'application/json',
      'ormuz-event-type': 'approval.staged',
      'idempotency-key': staged!.headers['ormuz-delivery-id'],
    });
    expect(JSON.parse(staged!.body)).toEqual({
      type: 'approval.staged',
      event_id: expect.any(String),
      tenant,
      approval_id: call.approvalId,
      call_id: call.callId,
      tool: 'device.send_message',
      agent_id: 'agent-1',
      summary: 'Send a text message to Alice: "hi"',
      expires_at: call.expiresAt,
      decision: null,
      decided_by: null,
      reason: null,
      occurred_at: expect.any(String),
    } satisfies ApprovalWebhookV1);

    await waitFor(async () => (await as(tenant, ['owner'], 'approvals.list', { tenant })).approvals.length === 1, {
      message: 'the approval in the inbox',
    });
    await as(tenant, ['owner'], 'approvals.deny', { tenant, approval_id: call.approvalId, reason: 'not now' });
    await waitFor(() => at('/sign').length === 2, { message: 'the decided webhook' });
    const decided = at('/sign')[1]!;
    expect(verifies(decided.headers['ormuz-signature'] as string, decided.body, secret!)).toBe(true);
    expect(decided.headers['ormuz-event-type']).toBe('approval.decided');
    expect(JSON.parse(decided.body)).toMatchObject({
      type: 'approval.decided',
      approval_id: call.approvalId,
      summary: 'Send a text message to Alice: "hi"',
      decision: 'denied',
      decided_by: `someone@${tenant}`,
      reason: 'not now',
    });

    // The delivery log, as an owner reads it: both delivered on the first attempt (once the deliverer has recorded
    // the answer the receiver already sent).
    const log = await waitFor(
      async () => {
        const read = await as(tenant, ['owner'], 'approvals.webhooks.deliveries', { tenant });
        return read.deliveries.every((d) => d.status !== 'pending') && read;
      },
      { message: 'both deliveries recorded' },
    );
    expect(log.deliveries.map((d) => [d.event, d.status, d.attempts, d.attempt_log.map((a) => a.status_code)])).toEqual(
      [
        ['decided', 'delivered', 1, [200]],
        ['staged', 'delivered', 1, [200]],
      ],
    );
  });

  it('sends expiries too', async () => {
    const tenant = 'hooks_expiry';
    await as(tenant, ['operator'], 'approvals.webhooks.set', { tenant, url: `${base}/expiry`, events: ['expired'] });
    const call = await stageCall(app.policy, tenant, 'op-expiry', { expiresInMs: 2000 });
    await waitFor(() => at('/expiry').length === 1, { message: 'the expired webhook' });
    expect(JSON.parse(at('/expiry')[0]!.body)).toMatchObject({
      type: 'approval.expired',
      approval_id: call.approvalId,
      decision: null,
    });
  });

  it('retries a receiver that fails twice: three attempts with one idempotency key', async () => {
    const tenant = 'hooks_flaky';
    answers.set('/flaky', (n) => ({ status: n <= 2 ? 503 : 200 }));
    const { secret } = await register(tenant, '/flaky');
    await stageCall(app.policy, tenant, 'op-flaky');
    const delivery = await deliveryOnce(tenant, (d) => d.status === 'delivered', 'the delivery to succeed');

    const attempts = at('/flaky');
    expect(attempts.map((r) => r.answered)).toEqual([503, 503, 200]);
    expect(attempts.map((r) => r.headers['ormuz-attempt'])).toEqual(['1', '2', '3']);
    expect(new Set(attempts.map((r) => r.headers['idempotency-key']))).toEqual(new Set([delivery.delivery_id]));
    expect(new Set(attempts.map((r) => r.headers['ormuz-delivery-id']))).toEqual(new Set([delivery.delivery_id]));
    expect(new Set(attempts.map((r) => r.body)).size).toBe(1);
    for (const r of attempts) expect(verifies(r.headers['ormuz-signature'] as string, r.body, secret!)).toBe(true);
    expect(delivery).toMatchObject({ attempts: 3, last_status_code: 200, next_attempt_at: null, last_error: null });
    expect(delivery.attempt_log.map((a) => [a.attempt, a.status_code, a.error])).toEqual([
      [1, 503, 'HTTP 503'],
      [2, 503, 'HTTP 503'],
      [3, 200, null],
    ]);
  });

  it('honours 429 with Retry-After, then delivers', async () => {
    const tenant = 'hooks_busy';
    answers.set('/busy', (n) => (n === 1 ? { status: 429, headers: { 'retry-after': '0' } } : { status: 204 }));
    await register(tenant, '/busy');
    await stageCall(app.policy, tenant, 'op-busy');
    const delivery = await deliveryOnce(tenant, (d) => d.status === 'delivered', 'the delivery to succeed');
    expect(delivery.attempt_log.map((a) => a.status_code)).toEqual([429, 204]);
  });

  it('stops at a 4xx: one attempt, failed', async () => {
    const tenant = 'hooks_refused';
    answers.set('/refused', () => ({ status: 410 }));
    await register(tenant, '/refused');
    await stageCall(app.policy, tenant, 'op-refused');
    const delivery = await deliveryOnce(tenant, (d) => d.status === 'failed', 'the delivery to fail');
    expect(delivery).toMatchObject({
      attempts: 1,
      last_status_code: 410,
      last_error: 'HTTP 410',
      next_attempt_at: null,
    });
    expect(at('/refused')).toHaveLength(1);
  });

  it('gives up after the configured attempts when the connection keeps failing', async () => {
    const tenant = 'hooks_hangup';
    answers.set('/hangup', () => ({ status: 0, hangUp: true }));
    await register(tenant, '/hangup');
    await stageCall(app.policy, tenant, 'op-hangup');
    const delivery = await deliveryOnce(tenant, (d) => d.status === 'failed', 'the delivery to fail');
    expect(delivery).toMatchObject({ attempts: 4, last_status_code: null, next_attempt_at: null });
    expect(delivery.last_error).toMatch(/gave up after 4 attempts$/);
    expect(delivery.attempt_log.map((a) => [a.status_code, a.error !== null])).toEqual([
      [null, true],
      [null, true],
      [null, true],
      [null, true],
    ]);
    expect(at('/hangup')).toHaveLength(4);
  });

  it('completes a delivery once when approvals is stopped mid-retry and started again', async () => {
    const tenant = 'hooks_restart';
    let receiverUp = false;
    // Down: ask for the next attempt in 2 s, so the service is stopped while the delivery waits for it.
    answers.set('/restart', () => (receiverUp ? { status: 200 } : { status: 503, headers: { 'retry-after': '2' } }));
    await register(tenant, '/restart');
    await stageCall(app.policy, tenant, 'op-restart');
    await deliveryOnce(tenant, (d) => d.status === 'pending' && d.attempts >= 1, 'a failed first attempt');

    await app.stop();
    receiverUp = true;
    await app.start();
    const delivery = await deliveryOnce(tenant, (d) => d.status === 'delivered', 'the delivery after the restart');

    const attempts = at('/restart');
    expect(attempts.filter((r) => r.answered === 200)).toHaveLength(1);
    expect(attempts.at(-1)!.answered).toBe(200);
    expect(new Set(attempts.map((r) => r.headers['idempotency-key']))).toEqual(new Set([delivery.delivery_id]));
    // Every request the receiver got is an attempt in the log (one cut short by the stop may not have reached it),
    // and the last attempt delivered it.
    expect(delivery.attempts).toBeGreaterThanOrEqual(attempts.length);
    expect(delivery.attempt_log.at(-1)).toMatchObject({ attempt: delivery.attempts, status_code: 200 });
  });

  it('creates no second delivery when the log is replayed from the start', async () => {
    const tenant = 'hooks_replay';
    await register(tenant, '/replay');
    const call = await stageCall(app.policy, tenant, 'op-replay');
    await waitFor(async () => (await as(tenant, ['owner'], 'approvals.list', { tenant })).approvals.length === 1, {
      message: 'the approval in the inbox',
    });
    await as(tenant, ['owner'], 'approvals.approve', { tenant, approval_id: call.approvalId });
    await waitFor(async () => (await deliveries(tenant)).filter((d) => d.status === 'delivered').length === 2, {
      message: 'the staged and decided webhooks',
    });
    // An endpoint registered after those events is not sent them by the replay either.
    await register(tenant, '/replay-late');
    const before = (await deliveries(tenant)).map((d) => d.delivery_id).sort();
    const requests = at('/replay').length;

    await app.stop();
    await sql`update ${sql.table(`${APPROVALS_SCHEMA}.projection_checkpoints`)} set seq = 0
      where projection = ${WEBHOOK_REACTION}`.execute(db);
    await app.start();
    const last = (await app.jsm.streams.info(streamName(ns, 'calls'))).state.last_seq;
    await waitFor(
      async () => {
        const status = (await app.service.infra.consumers.status()).find((c) => c.name === WEBHOOK_REACTION);
        return status !== undefined && status.checkpoint >= last && status.parked === 0;
      },
      { message: `the webhook reaction to replay up to ${last}` },
    );

    expect((await deliveries(tenant)).map((d) => d.delivery_id).sort()).toEqual(before);
    expect(at('/replay')).toHaveLength(requests);
    expect(at('/replay-late')).toHaveLength(0);
  });

  it('does not send to a removed endpoint, and keeps its deliveries in the log', async () => {
    const tenant = 'hooks_removed';
    const { webhook } = await register(tenant, '/removed');
    await stageCall(app.policy, tenant, 'op-removed-1');
    await deliveryOnce(tenant, (d) => d.status === 'delivered', 'the first delivery');
    const removed = await as(tenant, ['operator'], 'approvals.webhooks.remove', {
      tenant,
      webhook_id: webhook.webhook_id,
    });
    expect(removed.webhook_id).toBe(webhook.webhook_id);
    expect((await as(tenant, ['operator'], 'approvals.webhooks.list', { tenant })).webhooks).toEqual([]);
    expect(
      await refusal(as(tenant, ['operator'], 'approvals.webhooks.remove', { tenant, webhook_id: webhook.webhook_id })),
    ).toBe('webhook_not_found');
    expect(await deliveries(tenant)).toHaveLength(1);
  });

  it("refuses another tenant's commands, and people without the role", async () => {
    const tenant = 'hooks_acme';
    const { webhook } = await register(tenant, '/acme');
    const set = { tenant, url: `${base}/evil` };
    expect(await refusal(as('hooks_globex', ['operator'], 'approvals.webhooks.set', set))).toBe('forbidden');
    expect(await refusal(as('hooks_globex', ['admin'], 'approvals.webhooks.list', { tenant }))).toBe('forbidden');
    expect(await refusal(as('hooks_globex', ['owner'], 'approvals.webhooks.deliveries', { tenant }))).toBe('forbidden');
    expect(
      await refusal(
        as('hooks_globex', ['operator'], 'approvals.webhooks.remove', { tenant, webhook_id: webhook.webhook_id }),
      ),
    ).toBe('forbidden');
    // Naming its own tenant, globex does not reach acme's endpoint either.
    expect(
      await refusal(
        as('hooks_globex', ['operator'], 'approvals.webhooks.set', {
          tenant: 'hooks_globex',
          webhook_id: webhook.webhook_id,
          enabled: false,
        }),
      ),
    ).toBe('webhook_not_found');
    // Owners and analysts of acme read no secrets and register nothing; owners read the delivery log.
    expect(await refusal(as(tenant, ['owner'], 'approvals.webhooks.set', set))).toBe('forbidden');
    expect(await refusal(as(tenant, ['analyst'], 'approvals.webhooks.list', { tenant }))).toBe('forbidden');
    expect(await refusal(as(tenant, ['analyst'], 'approvals.webhooks.deliveries', { tenant }))).toBe('forbidden');
    expect(await refusal(as(tenant, ['owner'], 'approvals.webhooks.deliveries', { tenant }))).toBe('accepted');
    expect(await refusal(callRpc(app.nc, ns, 'approvals.webhooks.list', { tenant }, { checkReply: true }))).toBe(
      'unauthenticated',
    );
    expect((await as(tenant, ['operator'], 'approvals.webhooks.list', { tenant })).webhooks).toEqual([webhook]);
  });

  it('refuses a webhook URL that is not http(s)', async () => {
    const tenant = 'hooks_urls';
    const set = (url: string) => refusal(as(tenant, ['operator'], 'approvals.webhooks.set', { tenant, url }));
    for (const url of ['ftp://example.com/hook', 'file:///etc/passwd', 'javascript:alert(1)', 'example.com/hook'])
      expect(await set(url)).toBe('schema_violation');
    expect(await set('http://[::1/hook')).toBe('invalid_webhook');
    const { webhook } = await register(tenant, '/urls');
    expect(
      await refusal(
        as(tenant, ['operator'], 'approvals.webhooks.set', {
          tenant,
          webhook_id: webhook.webhook_id,
          url: 'gopher://example.com',
        }),
      ),
    ).toBe('schema_violation');
    expect((await as(tenant, ['operator'], 'approvals.webhooks.list', { tenant })).webhooks).toEqual([webhook]);
  });

  it('rotates the secret on request, showing the new one once', async () => {
    const tenant = 'hooks_rotate';
    const { webhook, secret } = await register(tenant, '/rotate');
    const changed = await as(tenant, ['operator'], 'approvals.webhooks.set', {
      tenant,
      webhook_id: webhook.webhook_id,
      description: 'pager',
    });
    expect(changed).toMatchObject({ secret: null, webhook: { description: 'pager' } });
    const rotated = await as(tenant, ['operator'], 'approvals.webhooks.set', {
      tenant,
      webhook_id: webhook.webhook_id,
      rotate_secret: true,
    });
    expect(rotated.secret).toMatch(/^whsec_/);
    expect(rotated.secret).not.toBe(secret);
    await stageCall(app.policy, tenant, 'op-rotate');
    await waitFor(() => at('/rotate').length === 1, { message: 'the webhook' });
    const [r] = at('/rotate');
    expect(verifies(r!.headers['ormuz-signature'] as string, r!.body, rotated.secret!)).toBe(true);
    expect(verifies(r!.headers['ormuz-signature'] as string, r!.body, secret!)).toBe(false);
  });

  it('keeps signing secrets sealed at rest; a secret stored in plain text before the key still signs, and is sealed when next set', async () => {
    const tenant = 'hooks_sealed';
    const stored = async (webhookId: string) =>
      (
        await sql<{ secret: string | null; secret_sealed: string | null }>`select secret, secret_sealed
          from ${sql.table(`${APPROVALS_SCHEMA}.webhooks`)} where webhook_id = ${webhookId}`.execute(db)
      ).rows[0]!;
    const { webhook, secret } = await register(tenant, '/sealed');
    const row = await stored(webhook.webhook_id);
    expect(row.secret).toBeNull();
    expect(row.secret_sealed).toMatch(/^v1\./);
    expect(row.secret_sealed).not.toContain(secret!.slice(6));

    // As a row written before the platform had a key: the secret in plain text.
    const legacy = `whsec_${'L'.repeat(43)}`;
    await sql`update ${sql.table(`${APPROVALS_SCHEMA}.webhooks`)} set secret = ${legacy}, secret_sealed = null
      where webhook_id = ${webhook.webhook_id}`.execute(db);
    const call = await stageCall(app.policy, tenant, 'op-sealed');
    await waitFor(() => at('/sealed').length === 1, { message: 'the webhook signed with the plain-text secret' });
    const [r] = at('/sealed');
    expect(verifies(r!.headers['ormuz-signature'] as string, r!.body, legacy)).toBe(true);

    await as(tenant, ['operator'], 'approvals.webhooks.set', {
      tenant,
      webhook_id: webhook.webhook_id,
      description: 'sealed now',
    });
    const resealed = await stored(webhook.webhook_id);
    expect(resealed.secret).toBeNull();
    expect(resealed.secret_sealed).toMatch(/^v1\./);
    expect(resealed.secret_sealed).not.toContain('LLLL');
    // The same secret, read back through the key: the next webhook verifies with it.
    await waitFor(async () => (await as(tenant, ['owner'], 'approvals.list', { tenant })).approvals.length === 1, {
      message: 'the approval in the inbox',
    });
    await as(tenant, ['owner'], 'approvals.deny', { tenant, approval_id: call.approvalId });
    await waitFor(() => at('/sealed').length === 2, { message: 'the decided webhook' });
    expect(verifies(at('/sealed')[1]!.headers['ormuz-signature'] as string, at('/sealed')[1]!.body, legacy)).toBe(true);
  });

  describe('on a platform that keeps webhooks off private addresses (the default)', () => {
    const guarded = new ApprovalsUnderTest('hooksguard', { WEBHOOK_POLL_MS: '50' });
    let guardedDb: Kysely<unknown>;
    const asOperator = async <N extends RpcName>(tenant: string, name: N, body: NoInfer<RpcRequestOf<N>>) =>
      callRpc(guarded.nc, guarded.namespace, name, body, {
        credential: await bearerFor(tenant, ['operator'], `ops@${tenant}`),
        checkReply: true,
      });
    beforeAll(async () => {
      await guarded.open();
      guardedDb = await openDatabase({ url: guarded.database.url });
    });
    afterAll(async () => {
      await guardedDb?.destroy();
      await guarded.close();
    });

    it('refuses to register a URL whose host is or resolves to a private address, saying which', async () => {
      const tenant = 'guard_set';
      const refused = async (url: string) =>
        asOperator(tenant, 'approvals.webhooks.set', { tenant, url }).then(
          () => undefined,
          (err: { code?: string; message: string }) => ({ code: err.code, message: err.message }),
        );
      expect(await refused(`${base}/guarded`)).toEqual({
        code: 'invalid_webhook',
        message: expect.stringMatching(
          /^Not registered: 127\.0\.0\.1 is a loopback address\. .*ORMUZ_WEBHOOKS_ALLOW_PRIVATE=true/,
        ),
      });
      expect((await refused('http://localhost:9/hook'))?.message).toMatch(
        /localhost resolves to (127\.0\.0\.1|::1), a loopback address/,
      );
      for (const [url, kind] of [
        ['http://[::1]/x', 'loopback'],
        ['http://[::ffff:192.168.0.10]/x', 'private'],
        ['http://10.1.2.3/x', 'private'],
        ['http://169.254.169.254/latest/meta-data', 'link-local'],
        ['http://[fd00::1]/x', 'unique-local'],
        ['http://0.0.0.0:8080/x', 'unspecified'],
      ] as const) {
        expect({ url, refused: await refused(url) }).toEqual({
          url,
          refused: { code: 'invalid_webhook', message: expect.stringContaining(`a ${kind} address`) },
        });
      }
      expect((await asOperator(tenant, 'approvals.webhooks.list', { tenant })).webhooks).toEqual([]);
    });

    it('refuses again at delivery time: an endpoint that now points at a private address is sent nothing', async () => {
      const tenant = 'guard_send';
      // Registered on a public address, then pointed at the receiver on 127.0.0.1 behind the service's back, as a DNS
      // change would: only the check at the attempt stands between the POST and the loopback interface.
      const { webhook } = await asOperator(tenant, 'approvals.webhooks.set', { tenant, url: 'https://203.0.113.9/x' });
      await sql`update ${sql.table(`${APPROVALS_SCHEMA}.webhooks`)} set url = ${`${base.replace('127.0.0.1', 'localhost')}/guarded`}
        where webhook_id = ${webhook.webhook_id}`.execute(guardedDb);
      await stageCall(guarded.policy, tenant, 'op-guarded');
      const delivery = await waitFor(
        async () => {
          const { deliveries: all } = await asOperator(tenant, 'approvals.webhooks.deliveries', { tenant });
          return all.length === 1 && all[0]!.status === 'failed' ? all[0]! : undefined;
        },
        { message: 'the delivery to be refused' },
      );
      expect(delivery).toMatchObject({ attempts: 1, last_status_code: null, next_attempt_at: null });
      expect(delivery.last_error).toMatch(/^not sent: localhost resolves to (127\.0\.0\.1|::1), a loopback address\./);
      expect(at('/guarded')).toHaveLength(0);
    });
  });
});
