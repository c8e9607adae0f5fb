/**
 * The verifiable archive and erasure, against the real audit service, NATS and Postgres: each tenant's archived events
 * form a hash chain that `audit.verify` re-computes; a flipped byte, a deleted row, two swapped rows and an inserted
 * one are each named as the first broken link; the archive writer role may not UPDATE or DELETE archived rows; erasure
 * and retention remove payloads and results while the chain still verifies.
 */
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { sql, type Kysely } from 'kysely';
import { pino } from 'pino';
import type { AuditVerifyReplyV1, RpcName, RpcRequestOf } from '@ormuz/contracts';
import { connectNats, EventStore } from '@ormuz/event-log';
import { openDatabase } from '@ormuz/postgres';
import { callRpc, startService, waitUntilServing, type RunningService } from '@ormuz/service-kit';
import {
  adminFor,
  bearerFor,
  createTestDatabase,
  randomNamespace,
  testEnv,
  waitFor,
  type TestDatabase,
} from '@ormuz/testing';
import { linkEvents, type ChainHead } from '../src/domain/archive-chain.js';
import { AUDIT_SCHEMA, auditService, loadAuditConfig } from '../src/index.js';
import type { ArchivedEventRow } from '../src/persistence/audit.repository.js';
import type { AuditDB } from '../src/persistence/audit.tables.js';
import { AUDIT_WRITER_ROLE } from '../src/persistence/migrations.js';
import {
  appendCall,
  appendConversationEvent,
  chainRows,
  DAY_MS,
  payloadSecret,
  resultSecret,
  teardown,
} from './archive.fixture.js';

const CALLS = 3;
/** Tenants whose archive each test tampers with, one way each. */
const TAMPERED = ['flip-data', 'flip-envelope', 'deleted', 'swapped', 'inserted', 'appended'] as const;

/** A row forged from `row` with `changes`, linked correctly onto `head`: what a tamperer who knows the form can make. */
function forge(row: ArchivedEventRow, head: ChainHead, changes: Partial<ArchivedEventRow>) {
  const { chain_pos, data_sha256, erasable_field, erasable_sha256, prev_hash, row_hash, erased_at, ...event } = row;
  void [chain_pos, data_sha256, erasable_field, erasable_sha256, prev_hash, row_hash, erased_at];
  const [forged] = linkEvents(new Map([[row.tenant, head]]), [{ ...event, ...changes }]);
  return { ...forged!, data: JSON.stringify(forged!.data) };
}

describe('the verifiable archive', () => {
  const ns = randomNamespace('archive');
  let database: TestDatabase;
  let running: RunningService;
  let nc: NatsConnection;
  let db: Kysely<AuditDB>;

  const ask = <N extends RpcName>(name: N, body: NoInfer<RpcRequestOf<N>>) =>
    adminFor(body).then((credential) => callRpc(nc, ns, name, body, { credential, checkReply: true }));
  const verify = (tenant: string) => ask('audit.verify', { tenant });
  const events = (tenant: string) => db.withSchema(AUDIT_SCHEMA).updateTable('events').where('tenant', '=', tenant);

  beforeAll(async () => {
    nc = await connectNats({ url: testEnv().natsUrl, name: 'archive-test' });
    database = await createTestDatabase();
    const config = loadAuditConfig({ NATS_URL: testEnv().natsUrl, DATABASE_URL: database.url, ORMUZ_NAMESPACE: ns });
    running = await startService({ ...auditService(config), logger: pino({ level: 'silent' }) });
    await waitUntilServing(nc, ns, 'audit');
    db = await openDatabase({ url: database.url });
    const store = new EventStore(jetstream(nc), await jetstreamManager(nc));

    // Two tenants' calls and conversations appended at once: the contexts' projections archive them concurrently.
    const old = new Date(Date.now() - 2 * DAY_MS);
    await Promise.all(
      ['alpha', 'beta'].flatMap((tenant) => [
        (async () => {
          for (let n = 0; n < 4; n++) await appendCall(store, ns, tenant, n, n < 2 ? old : new Date());
        })(),
        (async () => {
          for (let n = 0; n < 3; n++) await appendConversationEvent(store, ns, tenant, n);
        })(),
      ]),
    );
    for (const tenant of TAMPERED) {
      for (let n = 0; n < CALLS; n++) await appendCall(store, ns, tenant, n, new Date());
    }
    await waitFor(
      async () => {
        const { projections } = await ask('audit.projections', {});
        return projections.every((p) => p.checkpoint >= p.stream_last_seq);
      },
      { message: 'every audit projection to reach the end of its stream', timeoutMs: 30_000 },
    );
  }, 60_000);

  afterAll(async () => {
    await running?.close();
    await teardown({ nc, ns, db, database });
  }, 30_000);

  describe('a chain per tenant', () => {
    it.each(['alpha', 'beta'])('links %s’s events across contexts in archive order, and verifies', async (tenant) => {
      const rows = await chainRows(db, tenant);
      expect(rows).toHaveLength(4 * 2 + 3);
      expect(rows.map((r) => r.chain_pos)).toEqual(rows.map((_, i) => i + 1));
      expect(new Set(rows.map((r) => r.stream)).size).toBe(2);
      expect(rows[0]!.prev_hash).toBe('0'.repeat(64));
      for (let i = 1; i < rows.length; i++) expect(rows[i]!.prev_hash).toBe(rows[i - 1]!.row_hash);

      const reply = await verify(tenant);
      expect(reply).toEqual({
        tenant,
        checked: rows.length,
        last: { position: rows.length, hash: rows.at(-1)!.row_hash },
        next: null,
        broken: null,
      });
    });

    it('verifies a page at a time, going on from the link the last page verified', async () => {
      let after: AuditVerifyReplyV1['next'] = null;
      let checked = 0;
      let pages = 0;
      let reply: AuditVerifyReplyV1;
      do {
        reply = await ask('audit.verify', { tenant: 'alpha', limit: 3, ...(after ? { after } : {}) });
        checked += reply.checked;
        after = reply.next;
        pages++;
      } while (after);
      expect({ checked, broken: reply.broken, pages }).toEqual({ checked: 11, broken: null, pages: 4 });
    });

    it('names a page that starts from a wrong link', async () => {
      const rows = await chainRows(db, 'alpha');
      const reply = await ask('audit.verify', { tenant: 'alpha', after: { position: 2, hash: 'f'.repeat(64) } });
      expect(reply.broken).toEqual({
        position: 3,
        event_id: rows[2]!.id,
        reason: 'prev_hash',
        expected: 'f'.repeat(64),
        found: rows[1]!.row_hash,
      });
    });

    it('verifies an empty chain for a tenant with nothing archived', async () => {
      expect(await verify('nobody')).toMatchObject({ checked: 0, broken: null, next: null });
    });

    it('lets analysts verify', async () => {
      const credential = await bearerFor('alpha', ['analyst']);
      const reply = await callRpc(nc, ns, 'audit.verify', { tenant: 'alpha' }, { credential, checkReply: true });
      expect(reply.broken).toBeNull();
    });
  });

  describe('tampering, each named as the first broken link', () => {
    it('a flipped byte in the data', async () => {
      const rows = await chainRows(db, 'flip-data');
      const target = rows[2]!; // the second call's requested event: its payload
      expect(target.erasable_field).toBe('payload');
      await events('flip-data')
        .set({ data: sql`replace(data::text, 'secret', 'secreT')::jsonb` as never })
        .where('chain_pos', '=', 3)
        .execute();
      const { broken } = await verify('flip-data');
      expect(broken).toMatchObject({
        position: 3,
        event_id: target.id,
        reason: 'erasable_hash',
        expected: target.erasable_sha256,
      });
      expect(broken!.found).not.toBe(target.erasable_sha256);
    });

    it('a flipped byte in a covered envelope field', async () => {
      const rows = await chainRows(db, 'flip-envelope');
      await events('flip-envelope').set({ source: '/ormuz/device-bridgE' }).where('chain_pos', '=', 2).execute();
      const { broken } = await verify('flip-envelope');
      expect(broken).toMatchObject({
        position: 2,
        event_id: rows[1]!.id,
        reason: 'row_hash',
        found: rows[1]!.row_hash,
      });
    });

    it('a deleted row', async () => {
      const rows = await chainRows(db, 'deleted');
      await db
        .withSchema(AUDIT_SCHEMA)
        .deleteFrom('events')
        .where('tenant', '=', 'deleted')
        .where('chain_pos', '=', 3)
        .execute();
      expect((await verify('deleted')).broken).toEqual({
        position: 3,
        event_id: rows[3]!.id,
        reason: 'position',
        expected: '3',
        found: '4',
      });
    });

    it('two swapped rows', async () => {
      const rows = await chainRows(db, 'swapped');
      await events('swapped').set({ chain_pos: -2 }).where('chain_pos', '=', 2).execute();
      await events('swapped').set({ chain_pos: 2 }).where('chain_pos', '=', 4).execute();
      await events('swapped').set({ chain_pos: 4 }).where('chain_pos', '=', -2).execute();
      expect((await verify('swapped')).broken).toEqual({
        position: 2,
        event_id: rows[3]!.id,
        reason: 'prev_hash',
        expected: rows[0]!.row_hash,
        found: rows[2]!.row_hash,
      });
    });

    it('an inserted row, even one linked correctly onto the row before it', async () => {
      const rows = await chainRows(db, 'inserted');
      // Make room at position 3 (through a detour, positions being unique), then forge a well-linked row there.
      await events('inserted')
        .set({ chain_pos: sql`chain_pos + 1000` as never })
        .where('chain_pos', '>=', 3)
        .execute();
      await events('inserted')
        .set({ chain_pos: sql`chain_pos - 999` as never })
        .where('chain_pos', '>=', 1003)
        .execute();
      const head = { position: 2, hash: rows[1]!.row_hash };
      const forged = forge(rows[2]!, head, { seq: 999_999, id: 'forged-event', data: { forged: true } });
      await db.withSchema(AUDIT_SCHEMA).insertInto('events').values(forged).execute();
      expect((await verify('inserted')).broken).toEqual({
        position: 4,
        event_id: rows[2]!.id,
        reason: 'prev_hash',
        expected: forged.row_hash,
        found: rows[1]!.row_hash,
      });
    });

    it('a row appended behind the archive’s back', async () => {
      const rows = await chainRows(db, 'appended');
      const last = rows.at(-1)!;
      const forged = forge(
        last,
        { position: last.chain_pos, hash: last.row_hash },
        { seq: 999_998, id: 'appended-event' },
      );
      await db.withSchema(AUDIT_SCHEMA).insertInto('events').values(forged).execute();
      expect((await verify('appended')).broken).toEqual({
        position: rows.length + 1,
        event_id: 'appended-event',
        reason: 'head',
        expected: `${rows.length}:${last.row_hash}`,
        found: `${rows.length + 1}:${forged.row_hash}`,
      });
    });
  });

  describe('the archive writer role', () => {
    let writer: Kysely<AuditDB>;
    beforeAll(async () => {
      const url = new URL(database.url);
      url.username = AUDIT_WRITER_ROLE;
      writer = await openDatabase({ url: url.toString() });
    });
    afterAll(() => writer?.destroy());

    it('may read and insert archived rows but not UPDATE or DELETE them', async () => {
      const t = writer.withSchema(AUDIT_SCHEMA);
      const [row] = await t.selectFrom('events').selectAll().where('tenant', '=', 'alpha').limit(1).execute();
      expect(row).toBeDefined();
      const refused = { code: '42501' }; // insufficient_privilege
      await expect(
        t.updateTable('events').set({ type: 'forged' }).where('id', '=', row!.id).execute(),
      ).rejects.toMatchObject(refused);
      await expect(t.deleteFrom('events').where('id', '=', row!.id).execute()).rejects.toMatchObject(refused);
      await expect(sql`truncate ${sql.id(AUDIT_SCHEMA, 'events')}`.execute(writer)).rejects.toMatchObject(refused);
      // Inserting is what it is for (rolled back here).
      const rollback = new Error('roll back');
      await expect(
        writer.transaction().execute(async (trx) => {
          await trx
            .withSchema(AUDIT_SCHEMA)
            .insertInto('events')
            .values(forge(row!, { position: 999_996, hash: row!.row_hash }, { seq: 999_997, id: 'writer-insert' }))
            .execute();
          throw rollback;
        }),
      ).rejects.toBe(rollback);
      expect(await chainRows(db, 'alpha')).toHaveLength(11);
    });
  });

  describe('erasure and retention', () => {
    const dataText = async (tenant: string) =>
      (
        await sql<{
          t: string;
        }>`select string_agg(data::text, ' ') as t from ${sql.id(AUDIT_SCHEMA, 'events')} where tenant = ${tenant}`.execute(
          db,
        )
      ).rows[0]!.t;

    it('erases payloads recorded before the cut-off, keeps their hashes, and the chain still verifies', async () => {
      const before = await chainRows(db, 'beta');
      const reply = await ask('audit.erase', {
        tenant: 'beta',
        before: new Date(Date.now() - DAY_MS).toISOString(),
        kinds: ['payloads'],
      });
      expect(reply).toMatchObject({ tenant: 'beta', kinds: ['payloads'], erased_events: 2, erased_calls: 2 });

      const after = await chainRows(db, 'beta');
      const erased = after.filter((r) => r.erased_at !== null);
      expect(erased.map((r) => r.type)).toEqual(['ormuz.toolcall.requested.v1', 'ormuz.toolcall.requested.v1']);
      for (const r of erased) {
        expect(r.data).not.toHaveProperty('payload');
        const was = before.find((b) => b.id === r.id)!;
        expect({ ...r, data: undefined, erased_at: undefined }).toEqual({
          ...was,
          data: undefined,
          erased_at: undefined,
        });
      }
      const text = await dataText('beta');
      expect(text).not.toContain(payloadSecret('beta', 0));
      expect(text).not.toContain(payloadSecret('beta', 1));
      expect(text).toContain(payloadSecret('beta', 2)); // recorded after the cut-off
      expect(text).toContain(resultSecret('beta', 0)); // results were not asked for

      const calls = await db
        .withSchema(AUDIT_SCHEMA)
        .selectFrom('call_records')
        .select(['payload', 'payload_erased_at', 'payload_sha256'])
        .where('tenant', '=', 'beta')
        .where('payload_erased_at', 'is not', null)
        .execute();
      expect(calls).toHaveLength(2);
      for (const c of calls) expect(c.payload).toBeNull();

      expect((await verify('beta')).broken).toBeNull();
      // Erasing again finds nothing left to erase.
      expect(
        await ask('audit.erase', {
          tenant: 'beta',
          before: new Date(Date.now() - DAY_MS).toISOString(),
          kinds: ['payloads'],
        }),
      ).toMatchObject({ erased_events: 0, erased_calls: 0 });
    });

    it('still detects a changed row after an erasure', async () => {
      const rows = await chainRows(db, 'beta');
      const erased = rows.find((r) => r.erased_at !== null)!;
      await events('beta')
        .set({ data: sql`jsonb_set(data, '{agent_id}', '"agent-2"')` as never })
        .where('id', '=', erased.id)
        .execute();
      expect((await verify('beta')).broken).toMatchObject({
        position: erased.chain_pos,
        event_id: erased.id,
        reason: 'data_hash',
      });
    });

    it('refuses a cut-off in the future and erases nothing', async () => {
      await expect(
        ask('audit.erase', { tenant: 'alpha', before: new Date(Date.now() + DAY_MS).toISOString() }),
      ).rejects.toMatchObject({ code: 'invalid_erasure' });
      expect((await chainRows(db, 'alpha')).filter((r) => r.erased_at !== null)).toEqual([]);
    });

    it('refuses an erasure from anyone but an admin of the tenant', async () => {
      for (const role of ['analyst', 'operator'] as const) {
        const credential = await bearerFor('alpha', [role]);
        await expect(
          callRpc(nc, ns, 'audit.erase', { tenant: 'alpha', before: new Date().toISOString() }, { credential }),
        ).rejects.toMatchObject({ code: 'forbidden' });
      }
    });

    it('sets a retention, applies it at once, and the chain still verifies', async () => {
      expect(await ask('audit.retention.get', { tenant: 'alpha' })).toEqual({
        tenant: 'alpha',
        payloads_days: null,
        results_days: null,
        updated_at: null,
      });
      const set = await ask('audit.retention.set', { tenant: 'alpha', results_days: 1 });
      expect(set).toMatchObject({ tenant: 'alpha', payloads_days: null, results_days: 1 });
      expect(await ask('audit.retention.get', { tenant: 'alpha' })).toEqual(set);

      const erased = (await chainRows(db, 'alpha')).filter((r) => r.erased_at !== null);
      expect(erased.map((r) => r.type)).toEqual(['ormuz.toolcall.succeeded.v1', 'ormuz.toolcall.succeeded.v1']);
      const text = await dataText('alpha');
      expect(text).not.toContain(resultSecret('alpha', 0));
      expect(text).toContain(resultSecret('alpha', 3));
      expect(text).toContain(payloadSecret('alpha', 0));
      expect((await verify('alpha')).broken).toBeNull();

      // Setting one kind keeps the other.
      expect(await ask('audit.retention.set', { tenant: 'alpha', payloads_days: 30 })).toMatchObject({
        payloads_days: 30,
        results_days: 1,
      });
    });

    it('refuses a retention of zero days', async () => {
      await expect(ask('audit.retention.set', { tenant: 'alpha', payloads_days: 0 })).rejects.toMatchObject({
        code: 'schema_violation',
      });
    });
  });
});
