/**
 * `consumers.rebuild` (`ormuz projections rebuild <name> --into <schema>`): replays one projection's stream into a
 * fresh schema with the live projection's own code ({@link ProjectionRunner.copyInto}), then compares the copy with
 * the live read model row by row ({@link ReadModelDiff}) and/or swaps it in ({@link ReadModelSwap}).
 *
 * The schema is created with the service's own migrations and marked (a comment) as an unfinished rebuild of the
 * projection, in one transaction; the copy keeps its checkpoint in it. A rebuild cut short (the process killed) is
 * continued from that checkpoint by the same command. A schema that exists for any other reason is refused, unless it
 * is an earlier rebuild and `force` is given; the live schemas are always refused.
 */
import { sql, type Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { RebuildProjectionReplyV1, RebuildProjectionRequestV1 } from '@ormuz/contracts';
import type { ProjectionRunner } from '@ormuz/event-log';
import { migrateSchema } from '@ormuz/postgres';
import type { SchemaMigrations } from '../infrastructure.js';
import { ReadModelDiff, type Comparison } from './read-model-diff.js';
import { ReadModelSwap } from './read-model-swap.js';

const IDENTIFIER = /^[a-z_][a-z0-9_]{0,62}$/;
const MARK = 'ormuz rebuild of ';
const UNFINISHED = ': unfinished';
/** How long the copy may take to catch up with the stream. */
const CATCH_UP_MS = 600_000;
/** Attempts at reading both sides at one checkpoint while the live model moves. */
const ALIGN_ATTEMPTS = 20;

/** The table privileges a copy may be granted (they are spliced into a GRANT as keywords). */
const TABLE_PRIVILEGES = new Set(['SELECT', 'INSERT', 'UPDATE', 'DELETE', 'TRUNCATE', 'REFERENCES', 'TRIGGER']);
const badRequest = (message: string) => Object.assign(new Error(message), { code: 'bad_request' });

export class ProjectionRebuilder {
  private readonly running = new Set<string>();
  private readonly diff = new ReadModelDiff();
  private readonly swapper: ReadModelSwap;

  constructor(
    private readonly db: Kysely<unknown>,
    private readonly schemas: readonly SchemaMigrations[],
    private readonly logger: Logger,
  ) {
    this.swapper = new ReadModelSwap(db);
  }

  async rebuild(live: ProjectionRunner, request: RebuildProjectionRequestV1): Promise<RebuildProjectionReplyV1> {
    const { projection } = live;
    const { into } = request;
    if (!projection.tables)
      throw badRequest(`${projection.name} declares no tables, so it cannot be rebuilt elsewhere.`);
    if (this.running.has(projection.name)) throw badRequest(`A rebuild of ${projection.name} is running already.`);
    this.running.add(projection.name);
    try {
      const resumed = await this.prepare(projection.name, projection.schema, into, request.force === true);
      const copy = live.copyInto(into, `${projection.name}_rebuild_${into}`);
      this.logger.info({ projection: projection.name, into, resumed }, 'projection rebuild started');
      let comparison: Comparison | undefined;
      let swapped = false;
      try {
        await copy.start();
        await copy.catchUp(CATCH_UP_MS);
        await copy.stop();
        if (request.diff) comparison = await this.compare(live, copy, into);
        await this.mark(projection.name, into, ': finished');
        if (request.swap) {
          await this.swapper.swap(live, copy, into, CATCH_UP_MS);
          await this.mark(projection.name, into, ': swapped out (the read model it replaced)');
          swapped = true;
        }
      } finally {
        await copy.dispose();
      }
      const parked = (await copy.parked()).length;
      this.logger.info({ projection: projection.name, into, swapped, parked }, 'projection rebuild done');
      return {
        name: projection.name,
        schema: projection.schema,
        into,
        resumed,
        checkpoint: copy.position,
        parked,
        ...(comparison ?? {}),
        swapped,
      };
    } finally {
      this.running.delete(projection.name);
    }
  }

  /** Checks `into` and creates it (or finds the unfinished rebuild to continue); true when continuing one. */
  private async prepare(name: string, live: string, into: string, force: boolean): Promise<boolean> {
    if (!IDENTIFIER.test(into)) {
      throw badRequest(
        `${JSON.stringify(into)} is not a schema name: lower-case letters, digits and _, not starting with a digit, ` +
          'at most 63 characters.',
      );
    }
    if (into === live || this.schemas.some((s) => s.schema === into) || into.startsWith('pg_') || into === 'public') {
      throw badRequest(`${into} is a live schema; rebuild into a new one (e.g. ${live}_rebuild).`);
    }
    const { rows } = await sql<{ comment: string | null }>`select obj_description(oid, 'pg_namespace') as comment
      from pg_namespace where nspname = ${into}`.execute(this.db);
    const comment = rows[0]?.comment ?? null;
    const ours = comment?.startsWith(MARK) === true;
    if (rows.length > 0) {
      if (comment === `${MARK}${name}${UNFINISHED}` && !force) {
        await this.migrate(live, into);
        return true;
      }
      if (!ours)
        throw badRequest(`Schema ${into} exists and is not a rebuild: choose another name (it is never dropped).`);
      if (!force) throw badRequest(`Schema ${into} exists (${comment}); --force replaces it.`);
      await sql`drop schema ${sql.id(into)} cascade`.execute(this.db);
    }
    await this.db.transaction().execute(async (trx) => {
      await sql`create schema ${sql.id(into)}`.execute(trx);
      await sql`comment on schema ${sql.id(into)} is ${sql.lit(`${MARK}${name}${UNFINISHED}`)}`.execute(trx);
    });
    await this.migrate(live, into);
    return false;
  }

  /** Builds the live schema's tables in `into` with the same migrations, and the same privileges. */
  private async migrate(live: string, into: string): Promise<void> {
    const own = this.schemas.find((s) => s.schema === live);
    if (!own) throw new Error(`No migrations build schema ${live} in this service.`);
    await migrateSchema(this.db, into, own.migrations);
    await this.mirrorPrivileges(live, into);
  }

  /**
   * Grants the copy what the live schema grants other roles (the audit archive's writer may only insert, say): the
   * projection's code, which may take such a role, runs in the copy as it runs live, and tables swapped in keep them.
   */
  private async mirrorPrivileges(live: string, into: string): Promise<void> {
    const { rows: readers } = await sql<{ role: string }>`select r.rolname as role from pg_roles r
      where not r.rolsuper and r.rolname !~ '^pg_' and r.rolname <> current_user
        and has_schema_privilege(r.oid, ${live}, 'USAGE')`.execute(this.db);
    for (const { role } of readers) await sql`grant usage on schema ${sql.id(into)} to ${sql.id(role)}`.execute(this.db);
    const { rows: grants } = await sql<{ role: string; table: string; privilege: string }>`
      select r.rolname as role, c.relname as table, a.privilege_type as privilege
      from pg_class c join pg_namespace n on n.oid = c.relnamespace
        cross join lateral aclexplode(c.relacl) a join pg_roles r on r.oid = a.grantee
      where n.nspname = ${live} and c.relkind in ('r', 'p') and r.rolname <> current_user
        and exists (select 1 from pg_tables t where t.schemaname = ${into} and t.tablename = c.relname)`.execute(this.db);
    for (const { role, table, privilege } of grants) {
      if (!TABLE_PRIVILEGES.has(privilege)) continue;
      await sql`grant ${sql.raw(privilege)} on ${sql.id(into, table)} to ${sql.id(role)}`.execute(this.db);
    }
  }

  private async mark(name: string, into: string, state: string): Promise<void> {
    await sql`comment on schema ${sql.id(into)} is ${sql.lit(`${MARK}${name}${state}`)}`.execute(this.db);
  }

  /**
   * Compares both sides at one checkpoint: in a snapshot where the live checkpoint equals the copy's. When the live
   * projection is behind, waits for it; when ahead, the copy applies up to it first.
   */
  private async compare(live: ProjectionRunner, copy: ProjectionRunner, into: string): Promise<Comparison> {
    const { schema, name, stream } = live.projection;
    for (let attempt = 0; attempt < ALIGN_ATTEMPTS; attempt++) {
      const result = await this.db
        .transaction()
        .setIsolationLevel('repeatable read')
        .execute(async (trx) => {
          const { rows } = await sql<{ seq: string }>`select seq from ${sql.table(`${schema}.projection_checkpoints`)}
            where projection = ${name} and stream = ${stream}`.execute(trx);
          const at = Number(rows[0]?.seq ?? 0);
          if (at !== copy.position) return at;
          return this.diff.compare(trx, schema, into, live.projection.tables ?? []);
        });
      if (typeof result !== 'number') return result;
      if (result > copy.position) {
        await copy.start();
        await copy.waitFor(result, CATCH_UP_MS);
        await copy.stop();
      } else {
        await live.waitFor(copy.position, CATCH_UP_MS);
      }
    }
    throw new Error(`The live ${name} kept moving: no moment where both sides stood at one checkpoint was found.`);
  }
}
