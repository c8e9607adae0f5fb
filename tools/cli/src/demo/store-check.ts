/**
 * The demo keeps two stores across runs: the JetStream store of its NATS server and its database. They must come from
 * the same runs, because every projection and reaction resumes after its checkpoint in the database: against streams
 * that hold fewer events than a checkpoint says were read (a database used with another NATS server, or a store
 * deleted since), the services would wait for events that never come, or skip new ones. The demo checks that before it
 * starts anything, and says how to put them back in step.
 */
import { jetstreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import type { openDatabase } from '@ormuz/postgres';

type Database = Awaited<ReturnType<typeof openDatabase<any>>>;

/** One consumer's checkpoint: it has handled `stream` up to sequence `seq`. */
export interface Checkpoint {
  readonly schema: string;
  readonly consumer: string;
  readonly stream: string;
  readonly seq: number;
}

/** Checkpoints past the end of their stream (`lastSeq` by stream name; a stream that is missing holds 0). */
export function checkpointsPastStreams(
  checkpoints: readonly Checkpoint[],
  lastSeq: ReadonlyMap<string, number>,
): { checkpoint: Checkpoint; last: number }[] {
  return checkpoints
    .map((checkpoint) => ({ checkpoint, last: lastSeq.get(checkpoint.stream) ?? 0 }))
    .filter(({ checkpoint, last }) => checkpoint.seq > last);
}

/** Every consumer's checkpoint past 0, from each schema that has the bookkeeping table (one per service). */
export async function readCheckpoints(db: Database): Promise<Checkpoint[]> {
  const schemas = await db
    .selectFrom('information_schema.tables')
    .select('table_schema')
    .where('table_name', '=', 'projection_checkpoints')
    .execute();
  const found: Checkpoint[] = [];
  for (const { table_schema: schema } of schemas as { table_schema: string }[]) {
    const rows = (await db
      .withSchema(schema)
      .selectFrom('projection_checkpoints')
      .select(['projection', 'stream', 'seq'])
      .where('seq', '>', 0)
      .execute()) as { projection: string; stream: string; seq: string | number }[];
    for (const r of rows) found.push({ schema, consumer: r.projection, stream: r.stream, seq: Number(r.seq) });
  }
  return found;
}

/** The last sequence of every stream, from the server's monitoring endpoint (`/jsz`, which needs no NATS user). */
export async function readStreamEnds(monitorUrl: string): Promise<Map<string, number>> {
  const res = await fetch(`${monitorUrl}/jsz?accounts=true&streams=true`, { signal: AbortSignal.timeout(5000) });
  if (!res.ok) throw new Error(`${monitorUrl}/jsz answered ${res.status}.`);
  const jsz = (await res.json()) as {
    account_details?: { stream_detail?: { name: string; state: { last_seq: number } }[] }[];
  };
  const ends = new Map<string, number>();
  for (const account of jsz.account_details ?? []) {
    for (const stream of account.stream_detail ?? []) ends.set(stream.name, stream.state.last_seq);
  }
  return ends;
}

/**
 * The last sequence of the `names` streams, asked over JetStream (a stream that is missing holds 0): for a server the
 * user named, when the demo's connection may use the JetStream API (a server without users).
 */
export async function readStreamEndsOver(nc: NatsConnection, names: readonly string[]): Promise<Map<string, number>> {
  const jsm = await jetstreamManager(nc, { timeout: 5000 });
  const ends = new Map<string, number>();
  for (const name of new Set(names)) {
    try {
      ends.set(name, (await jsm.streams.info(name)).state.last_seq);
    } catch (err) {
      if (!(err instanceof Error && (err.name === 'StreamNotFoundError' || /stream not found/i.test(err.message)))) {
        throw err;
      }
      ends.set(name, 0);
    }
  }
  return ends;
}

/** Where the streams are, for the message: the demo's own store, or a server the user named. */
export type StreamPlace = { readonly storeDir: string } | { readonly natsUrl: string };

/**
 * Throws, naming a consumer that is ahead of its stream and the ways out, when the database has read further into a
 * stream than the server holds.
 */
export async function assertStreamsMatchDatabase(
  db: Database,
  streamEnds: (names: readonly string[]) => Promise<ReadonlyMap<string, number>>,
  where: StreamPlace & { readonly databaseUrl: string },
): Promise<void> {
  const checkpoints = await readCheckpoints(db);
  if (checkpoints.length === 0) return;
  const ahead = checkpointsPastStreams(checkpoints, await streamEnds(checkpoints.map((c) => c.stream)));
  if (ahead.length === 0) return;
  const { checkpoint: first, last } = ahead[0]!;
  const database = new URL(where.databaseUrl);
  const name = decodeURIComponent(database.pathname.slice(1));
  database.pathname = '/postgres';
  const drop = `psql '${database.href}' -c 'DROP DATABASE "${name}"'`;
  const what =
    `${first.schema}.${first.consumer} has read stream ${first.stream} up to #${first.seq}, but the server holds ` +
    `${last} events there${ahead.length > 1 ? ` (and ${ahead.length - 1} more consumers are ahead of theirs)` : ''}.`;
  throw new Error(
    'storeDir' in where
      ? `The demo's NATS store ${where.storeDir} and its database ${where.databaseUrl} are not from the same runs: ` +
          `${what} The database was used with another NATS server (before the demo ran its own), or the store was ` +
          'deleted. Run the demo against that server (e.g. NATS_URL=nats://127.0.0.1:4222 npm start), or start both ' +
          `afresh: ${drop} && rm -rf '${where.storeDir}'`
      : `NATS at ${where.natsUrl} and the database ${where.databaseUrl} are not from the same runs: ${what} The ` +
          "database was used with another NATS server (the demo's own, without NATS_URL?), or the streams were " +
          `deleted. Run the demo against that server, or in another namespace (ORMUZ_NAMESPACE, which has a database ` +
          `of its own), or start the database afresh: ${drop}`,
  );
}
