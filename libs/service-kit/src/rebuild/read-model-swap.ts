/**
 * Swaps a rebuilt read model in, with no downtime for readers: the live projection stops consuming (its tables stay
 * readable), the copy catches up with it, then one transaction moves the live tables out to the rebuild's schema and
 * the rebuilt ones in, and sets the live checkpoint (and parked messages) to the copy's. A reader's query waits for
 * that transaction (milliseconds) and then reads the rebuilt tables: it never sees a missing, empty or partial table.
 * The live projection then starts again from the copy's checkpoint.
 */
import { randomBytes } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import type { ProjectionRunner } from '@ormuz/event-log';

export class ReadModelSwap {
  constructor(private readonly db: Kysely<unknown>) {}

  /** Swaps the tables of `live` for those of `copy`, in `into`. Both runners are stopped on return, `live` restarted. */
  async swap(live: ProjectionRunner, copy: ProjectionRunner, into: string, timeoutMs: number): Promise<number> {
    const { projection } = live;
    const shared = (projection.tables ?? []).filter((t) => t.rows);
    if (shared.length > 0) {
      throw Object.assign(
        new Error(
          `${projection.name} writes ${shared.map((t) => t.name).join(', ')} with other projections: its tables cannot ` +
            'be swapped alone. Compare it with --diff, or fix the live rows with `ormuz projections retry`.',
        ),
        { code: 'bad_request' },
      );
    }
    await live.stop();
    try {
      await copy.start();
      await copy.waitFor(live.position, timeoutMs);
      await copy.stop();
      await this.exchange(live, copy, into);
    } finally {
      await live.start();
    }
    return copy.position;
  }

  private async exchange(live: ProjectionRunner, copy: ProjectionRunner, into: string): Promise<void> {
    const { schema, name, stream } = live.projection;
    const hold = `ormuz_swap_${randomBytes(6).toString('hex')}`;
    const tables = (live.projection.tables ?? []).map((t) => t.name);
    await this.db.transaction().execute(async (trx) => {
      await sql`create schema ${sql.id(hold)}`.execute(trx);
      for (const t of tables)
        await sql`alter table ${sql.table(`${schema}.${t}`)} set schema ${sql.id(hold)}`.execute(trx);
      for (const t of tables)
        await sql`alter table ${sql.table(`${into}.${t}`)} set schema ${sql.id(schema)}`.execute(trx);
      for (const t of tables)
        await sql`alter table ${sql.table(`${hold}.${t}`)} set schema ${sql.id(into)}`.execute(trx);
      await sql`drop schema ${sql.id(hold)}`.execute(trx);
      await sql`insert into ${sql.table(`${schema}.projection_checkpoints`)} (projection, stream, seq)
        values (${name}, ${stream}, ${copy.position})
        on conflict (projection, stream) do update set seq = excluded.seq, updated_at = now()`.execute(trx);
      await sql`delete from ${sql.table(`${schema}.parked_messages`)} where projection = ${name} and stream = ${stream}`.execute(
        trx,
      );
      await sql`insert into ${sql.table(`${schema}.parked_messages`)}
        select ${name}, stream, seq, subject, payload, error, parked_at from ${sql.table(`${into}.parked_messages`)}
        where projection = ${copy.name} and stream = ${stream}`.execute(trx);
    });
  }
}
