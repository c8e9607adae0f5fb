/**
 * kill -9 of the audit service while it archives a backlog. The compiled service (as in production) is started on a
 * log that already holds thousands of events of several tenants in two contexts, killed with SIGKILL twice while its
 * projections commit batches, and started again. Afterwards every tenant's chain verifies, and the archive holds
 * exactly the events of the log (a rebuild from the log gives the same rows), each once.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { jetstream, jetstreamManager, type JetStreamClient } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { sql, type Kysely } from 'kysely';
import { contextFilter, type AuditVerifyReplyV1, type ChainLinkV1, type ContextName } from '@ormuz/contracts';
import { connectNats, EventStore, replay, streamName } from '@ormuz/event-log';
import { openDatabase } from '@ormuz/postgres';
import { callRpc, waitUntilServing } from '@ormuz/service-kit';
import { adminFor, createTestDatabase, randomNamespace, testEnv, waitFor, type TestDatabase } from '@ormuz/testing';
import { AUDIT_SCHEMA } from '../src/index.js';
import type { AuditDB } from '../src/persistence/audit.tables.js';
import { appendCall, appendConversationEvent, chainRows, teardown } from './archive.fixture.js';

const ENTRY = join(import.meta.dirname, '..', 'dist', 'main.js');
const TENANTS = ['k-one', 'k-two', 'k-three'];
const CALLS_PER_TENANT = 250;
const CONVERSATION_EVENTS_PER_TENANT = 100;
const TOTAL = TENANTS.length * (CALLS_PER_TENANT * 2 + CONVERSATION_EVENTS_PER_TENANT);
const CONTEXTS_WRITTEN: ContextName[] = ['calls', 'conversations'];

describe('audit killed with SIGKILL while archiving', () => {
  const ns = randomNamespace('archkill');
  let database: TestDatabase;
  let nc: NatsConnection;
  let js: JetStreamClient;
  let db: Kysely<AuditDB>;
  let audit: ChildProcess | undefined;

  const archived = async () =>
    (await sql<{ n: number }>`select count(*)::int as n from ${sql.id(AUDIT_SCHEMA, 'events')}`.execute(db)).rows[0]!.n;

  async function startAudit(): Promise<void> {
    const child = spawn(process.execPath, [ENTRY], {
      env: {
        ...process.env,
        NATS_URL: testEnv().natsUrl,
        DATABASE_URL: database.url,
        ORMUZ_NAMESPACE: ns,
        AUDIT_BATCH_SIZE: '16',
        LOG_LEVEL: 'silent',
      },
      stdio: 'ignore',
    });
    let exited = false;
    child.once('exit', () => (exited = true));
    audit = child;
    await waitUntilServing(nc, ns, 'audit', { timeoutMs: 30_000, stillStarting: () => !exited });
  }

  async function kill(): Promise<void> {
    const dead = audit!;
    const exited = new Promise((resolve) => dead.once('exit', resolve));
    dead.kill('SIGKILL');
    await exited;
  }

  beforeAll(async () => {
    if (!existsSync(ENTRY)) throw new Error(`${ENTRY} does not exist: run \`npm run build\` first.`);
    nc = await connectNats({ url: testEnv().natsUrl, name: 'archive-kill-test' });
    js = jetstream(nc);
    database = await createTestDatabase();
    // The first start declares the streams and migrates; stopped again before anything is on the log.
    await startAudit();
    await kill();
    db = await openDatabase({ url: database.url });
    const store = new EventStore(js, await jetstreamManager(nc));
    await Promise.all(
      TENANTS.flatMap((tenant) => [
        (async () => {
          for (let n = 0; n < CALLS_PER_TENANT; n++) await appendCall(store, ns, tenant, n, new Date());
        })(),
        (async () => {
          for (let n = 0; n < CONVERSATION_EVENTS_PER_TENANT; n++) await appendConversationEvent(store, ns, tenant, n);
        })(),
      ]),
    );
  }, 120_000);

  afterAll(async () => {
    audit?.kill('SIGKILL');
    await teardown({ nc, ns, db, database });
  }, 30_000);

  it('leaves every tenant a chain that verifies and an archive equal to the log', async () => {
    for (const share of [1 / 4, 2 / 3]) {
      await startAudit();
      await waitFor(async () => (await archived()) >= TOTAL * share, {
        timeoutMs: 60_000,
        intervalMs: 5,
        message: `the archive to reach ${Math.round(share * 100)}% of the backlog`,
      });
      await kill();
      expect(await archived()).toBeLessThan(TOTAL);
    }
    await startAudit();
    await waitFor(async () => (await archived()) === TOTAL, { timeoutMs: 60_000, message: 'the whole backlog' });

    for (const tenant of TENANTS) {
      const credential = await adminFor({ tenant });
      let after: ChainLinkV1 | null = null;
      let checked = 0;
      do {
        const reply: AuditVerifyReplyV1 = await callRpc(
          nc,
          ns,
          'audit.verify',
          { tenant, limit: 500, ...(after ? { after } : {}) },
          { credential, checkReply: true },
        );
        expect(reply.broken).toBeNull();
        checked += reply.checked;
        after = reply.next;
      } while (after);
      expect(checked).toBe(CALLS_PER_TENANT * 2 + CONVERSATION_EVENTS_PER_TENANT);
      const rows = await chainRows(db, tenant);
      expect(rows.map((r) => r.chain_pos)).toEqual(rows.map((_, i) => i + 1));
    }

    // The rebuild from the log: every event of every stream, by its place, as the archive must hold it.
    const fromLog = new Map<string, unknown>();
    for (const context of CONTEXTS_WRITTEN) {
      const stream = streamName(ns, context);
      for await (const item of replay(js, { stream, filterSubject: contextFilter(ns, context) })) {
        const e = item.event!;
        fromLog.set(`${stream}/${item.seq}/${item.index}`, [e.id, e.type, e.tenant, e.subject, e.time, e.data]);
      }
    }
    const rows = await db.withSchema(AUDIT_SCHEMA).selectFrom('events').selectAll().execute();
    const fromArchive = new Map<string, unknown>(
      rows.map((r) => [
        `${r.stream}/${r.seq}/${r.idx}`,
        [r.id, r.type, r.tenant, r.subject, r.time.toISOString(), r.data],
      ]),
    );
    expect(fromArchive.size).toBe(TOTAL);
    expect(fromArchive).toEqual(fromLog);
  }, 240_000);
});
