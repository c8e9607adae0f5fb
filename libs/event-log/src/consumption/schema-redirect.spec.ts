/** SchemaRedirect: what a projection names in its live schema is compiled for the rebuild's; a third schema never. */
import { DummyDriver, Kysely, PostgresAdapter, PostgresIntrospector, PostgresQueryCompiler, sql } from 'kysely';
import { SchemaOutsideRebuildError, SchemaRedirect } from './schema-redirect.js';

const db = new Kysely<Record<string, Record<string, unknown>>>({
  dialect: {
    createAdapter: () => new PostgresAdapter(),
    createDriver: () => new DummyDriver(),
    createIntrospector: (k) => new PostgresIntrospector(k),
    createQueryCompiler: () => new PostgresQueryCompiler(),
  },
}).withPlugin(new SchemaRedirect('policy', 'policy_rebuild'));

describe('SchemaRedirect', () => {
  it('rewrites withSchema, qualified table names in raw SQL and references', () => {
    const built = db
      .withSchema('policy')
      .updateTable('call_status')
      .set({ status: 'x' })
      .where('call_status.tenant', '=', 'acme')
      .compile().sql;
    expect(built).toBe(
      'update "policy_rebuild"."call_status" set "status" = $1 where "policy_rebuild"."call_status"."tenant" = $2',
    );
    const raw = sql`insert into ${sql.table('policy.call_status')} select 1`.compile(db).sql;
    expect(raw).toBe('insert into "policy_rebuild"."call_status" select 1');
  });

  it('leaves unqualified names (common table expressions) alone and stops a query naming a third schema', () => {
    expect(db.selectFrom('moved').selectAll().compile().sql).toBe('select * from "moved"');
    expect(() => db.withSchema('audit').selectFrom('events').selectAll().compile()).toThrow(SchemaOutsideRebuildError);
  });
});
