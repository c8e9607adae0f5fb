/**
 * CPU time read from /proc (Linux), for benches that say which process a rate is bound by: a process's own time, the
 * machine's busy time, the NATS server's, and a database's Postgres backends'. Everything is undefined where /proc
 * cannot be read (another OS), and the benches print "n/a" then.
 */
import { readdirSync, readFileSync } from 'node:fs';
import pg from 'pg';

/** CPU time of a process, in ms (utime + stime); undefined where it cannot be read. */
export function procCpuMs(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // utime and stime, fields 14 and 15, in clock ticks (100 a second on Linux).
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
  } catch {
    return undefined;
  }
}

/** The machine's busy and total CPU time, in ms, from /proc/stat; undefined where it cannot be read. */
export function machineCpuMs(): { busy: number; total: number } | undefined {
  try {
    const [, ...ticks] = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/);
    const n = ticks.map(Number);
    const total = n.reduce((a, b) => a + b, 0);
    return { busy: ((total - n[3]! - n[4]!) * 1000) / 100, total: (total * 1000) / 100 };
  } catch {
    return undefined;
  }
}

/** The pid of the local NATS server, if one runs on this machine. */
export function natsServerPid(): number | undefined {
  try {
    for (const entry of readdirSync('/proc')) {
      if (!/^\d+$/.test(entry)) continue;
      const comm = readFileSync(`/proc/${entry}/comm`, 'utf8').trim();
      if (comm === 'nats-server') return Number(entry);
    }
  } catch {
    // not Linux, or /proc unreadable
  }
  return undefined;
}

/** CPU used between a meter's start and its reading, in ms. */
export interface CpuUsed {
  /** Each named process. */
  readonly processes: Readonly<Record<string, number | undefined>>;
  /** The Postgres backends of the database measured (those that ended meanwhile take their time with them). */
  readonly postgres: number | undefined;
  /** Transactions the database committed (each statement outside a transaction is one); undefined without one. */
  readonly commits: number | undefined;
  /** The NATS server (shared with whatever else uses it). */
  readonly nats: number | undefined;
  /** Every process on the machine, and the time there was (cores × wall time). */
  readonly machineBusy: number | undefined;
  readonly machineTotal: number | undefined;
}

/**
 * Starts measuring the named processes, the NATS server, the machine and, given `database` and an admin URL, that
 * database's Postgres backends (listed through `pg_stat_activity` at the start and at the reading) and commits; the
 * function it returns reads what each used since (1.5 s later with a database, for its statistics to arrive).
 */
export async function startCpuMeter(
  processes: Readonly<Record<string, number | undefined>>,
  database?: { readonly adminUrl: string; readonly name: string },
): Promise<() => Promise<CpuUsed>> {
  const ask = async <R extends object>(statement: string): Promise<R[]> => {
    if (!database) return [];
    const client = new pg.Client({ connectionString: database.adminUrl });
    try {
      await client.connect();
      return (await client.query<R>(statement, [database.name])).rows;
    } finally {
      await client.end().catch(() => undefined);
    }
  };
  const backends = async () =>
    (await ask<{ pid: number }>('select pid from pg_stat_activity where datname = $1')).map((r) => r.pid);
  const commits = async () =>
    Number((await ask<{ n: string }>('select xact_commit as n from pg_stat_database where datname = $1'))[0]?.n ?? 0);
  const read = (pid: number | undefined) => (pid === undefined ? undefined : procCpuMs(pid));
  const nats = natsServerPid();
  const pg0 = new Map((await backends()).map((pid) => [pid, procCpuMs(pid) ?? 0]));
  const commits0 = await commits();
  const before = Object.fromEntries(Object.entries(processes).map(([name, pid]) => [name, read(pid)]));
  const nats0 = read(nats);
  const machine0 = machineCpuMs();
  return async () => {
    const after = Object.fromEntries(Object.entries(processes).map(([name, pid]) => [name, read(pid)]));
    const nats1 = read(nats);
    const machine1 = machineCpuMs();
    const pids = await backends();
    // A backend that started meanwhile counts from zero.
    const postgres = pids.reduce((n, pid) => n + (procCpuMs(pid) ?? 0) - (pg0.get(pid) ?? 0), 0);
    // Backends report their statistics to pg_stat_database about once a second.
    if (database) await new Promise((r) => setTimeout(r, 1_500));
    const committed = (await commits()) - commits0;
    return {
      processes: Object.fromEntries(
        Object.keys(processes).map((name) => {
          const [b, a] = [before[name], after[name]];
          return [name, a !== undefined && b !== undefined ? a - b : undefined];
        }),
      ),
      postgres: database && pg0.size > 0 ? postgres : undefined,
      commits: database ? committed : undefined,
      nats: nats0 !== undefined && nats1 !== undefined ? nats1 - nats0 : undefined,
      machineBusy: machine0 && machine1 ? machine1.busy - machine0.busy : undefined,
      machineTotal: machine0 && machine1 ? machine1.total - machine0.total : undefined,
    };
  };
}
