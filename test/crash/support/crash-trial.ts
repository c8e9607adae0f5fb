/**
 * Crash trials: a child process runs consumers of the log (test/crash/consumer-child.mjs) while a load appends events;
 * the child is killed with SIGKILL again and again — from outside at a random moment, or from inside at a chosen step
 * (received, event, applied, committed, acknowledged) — and restarted each time. Afterwards the read model it built
 * is compared with a rebuild from sequence 1 in a fresh database.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { sql, type Kysely } from 'kysely';
import type { CrashPoint } from '@ormuz/event-log';

const CHILD = fileURLToPath(new URL('../consumer-child.mjs', import.meta.url));
const POINTS: readonly (CrashPoint | 'outside')[] = [
  'received',
  'event',
  'applied',
  'committed',
  'acknowledged',
  'outside',
];

/** One consumer the child runs: `module`'s export `export` called with `args` builds it. */
export interface ChildConsumer {
  readonly module: string;
  readonly export: string;
  readonly args: readonly unknown[];
  readonly kind: 'projection' | 'reaction';
}

export interface ChildSpec {
  readonly natsUrl: string;
  readonly databaseUrl: string;
  readonly consumers: readonly ChildConsumer[];
  readonly batchSize?: number;
}

/** A module of this repository as the child imports it (the compiled file of a `src/...ts` path). */
export function compiled(pathFromRoot: string): string {
  const js = pathFromRoot.replace(/\/src\//, '/dist/').replace(/\.ts$/, '.js');
  return new URL(`../../../${js}`, import.meta.url).href;
}

interface Child {
  readonly exited: Promise<number | null>;
  readonly ready: Promise<void>;
  kill(): void;
  stderr(): string;
}

function startChild(spec: ChildSpec, crash?: { point: CrashPoint; after: number }): Child {
  const child = spawn(process.execPath, [CHILD], {
    env: { ...process.env, ORMUZ_CRASH_CHILD: JSON.stringify({ ...spec, crash }) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let err = '';
  child.stderr.on('data', (d: Buffer) => (err = (err + d.toString()).slice(-4000)));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const ready = new Promise<void>((resolve, reject) => {
    child.stdout.on('data', (d: Buffer) => d.toString().includes('ready') && resolve());
    void exited.then(() => reject(new Error(`the child exited before it was ready: ${err}`)));
  });
  ready.catch(() => undefined);
  return { exited, ready, kill: () => child.kill('SIGKILL'), stderr: () => err };
}

/**
 * Starts a child that kills itself at the `after`-th call of `point` and waits until it has. Throws when it fails, or
 * does not get there within `timeoutMs` (it is then killed from outside).
 */
export async function crashAt(
  spec: ChildSpec,
  crash: { point: CrashPoint; after: number },
  timeoutMs = 30_000,
): Promise<void> {
  const child = startChild(spec, crash);
  let late = false;
  const timer = setTimeout(() => {
    late = true;
    child.kill();
  }, timeoutMs);
  const code = await child.exited;
  clearTimeout(timer);
  if (late)
    throw new Error(`the child did not reach ${crash.point} #${crash.after} in ${timeoutMs} ms: ${child.stderr()}`);
  if (code !== null) throw new Error(`the child failed (exit ${code}) instead of being killed: ${child.stderr()}`);
}

export interface TrialReport {
  /** Kills by where they happened; a child asked to die at a step it did not reach in time is killed from outside. */
  readonly kills: Record<string, number>;
}

/**
 * Kills and restarts the child `kills` times while `load` runs. Resolves when the last child is dead; the caller
 * then runs {@link runToHead} to let a final child catch up.
 */
export async function crashRepeatedly(
  spec: ChildSpec,
  kills: number,
  random: () => number = Math.random,
): Promise<TrialReport> {
  const report: Record<string, number> = {};
  for (let i = 0; i < kills; i++) {
    const where = POINTS[Math.floor(random() * POINTS.length)]!;
    const crash = where === 'outside' ? undefined : { point: where, after: 1 + Math.floor(random() * 40) };
    const child = startChild(spec, crash);
    let killedBy: string = where;
    const ready = await Promise.race([child.ready.then(() => true), child.exited.then(() => false)]);
    if (ready || !crash) {
      const waitMs = crash ? 3000 : 20 + Math.floor(random() * 400);
      const timer = setTimeout(() => {
        killedBy = 'outside';
        child.kill();
      }, waitMs);
      await child.exited;
      clearTimeout(timer);
    }
    const code = await child.exited;
    if (code !== null && code !== 0)
      throw new Error(`the child failed (exit ${code}) instead of being killed: ${child.stderr()}`);
    report[killedBy] = (report[killedBy] ?? 0) + 1;
  }
  return { kills: report };
}

/** A consumer's checkpoint row. */
export interface CheckpointOf {
  readonly schema: string;
  readonly name: string;
  readonly stream: string;
}

/** Runs a child (no crash) until every listed checkpoint reaches its stream's last sequence, then kills it. */
export async function runToHead(
  spec: ChildSpec,
  db: Kysely<any>,
  targets: readonly (CheckpointOf & { readonly seq: number })[],
  timeoutMs = 60_000,
): Promise<void> {
  const child = startChild(spec);
  try {
    await child.ready;
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const behind: string[] = [];
      for (const t of targets) {
        const row = await db
          .withSchema(t.schema)
          .selectFrom('projection_checkpoints')
          .select('seq')
          .where('projection', '=', t.name)
          .where('stream', '=', t.stream)
          .executeTakeFirst();
        if (Number(row?.seq ?? 0) < t.seq) behind.push(`${t.schema}.${t.name} at ${row?.seq ?? 0} of ${t.seq}`);
      }
      if (behind.length === 0) return;
      if (Date.now() > deadline) throw new Error(`did not catch up: ${behind.join(', ')}\n${child.stderr()}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  } finally {
    child.kill();
    await child.exited;
  }
}

/** Every row of every read-model table in `schemas` (bookkeeping and migration tables left out), in a stable order. */
export async function dumpReadModels(db: Kysely<any>, schemas: readonly string[]): Promise<Record<string, unknown[]>> {
  const out: Record<string, unknown[]> = {};
  for (const schema of schemas) {
    const tables = await sql<{ table_name: string }>`
      select table_name from information_schema.tables
      where table_schema = ${schema} and table_type = 'BASE TABLE'
        and table_name not in ('projection_checkpoints', 'parked_messages') and table_name not like 'kysely_%'
      order by table_name`.execute(db);
    for (const { table_name } of tables.rows) {
      const rows = await sql<{ row: string }>`
        select t::text as row from ${sql.table(`${schema}.${table_name}`)} t order by t::text`.execute(db);
      out[`${schema}.${table_name}`] = rows.rows.map((r) => r.row);
    }
  }
  return out;
}

/** Parked messages in `schemas`, as `schema.consumer@seq: error`. */
export async function parkedIn(db: Kysely<any>, schemas: readonly string[]): Promise<string[]> {
  const out: string[] = [];
  for (const schema of schemas) {
    const rows = await db
      .withSchema(schema)
      .selectFrom('parked_messages')
      .select(['projection', 'seq', 'error'])
      .execute();
    out.push(...rows.map((r) => `${schema}.${r.projection}@${r.seq}: ${r.error}`));
  }
  return out;
}

/**
 * A steady background load: calls `step` about `perSecond` times a second (paced, not bursting) until stopped; errors
 * are collected, not thrown.
 */
export function steadyLoad(
  perSecond: number,
  step: (i: number) => Promise<void>,
): { stop(): Promise<{ steps: number; errors: string[] }> } {
  let running = true;
  let steps = 0;
  const errors: string[] = [];
  const started = Date.now();
  const loop = (async () => {
    while (running) {
      try {
        await step(steps++);
      } catch (err) {
        errors.push(String(err));
      }
      const due = started + (steps * 1000) / perSecond;
      if (due > Date.now()) await new Promise((r) => setTimeout(r, due - Date.now()));
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      return { steps, errors };
    },
  };
}
