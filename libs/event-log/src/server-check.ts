/**
 * Warns loudly when the NATS server cannot give the durability Ormuz relies on in production:
 * servers before 2.11 lack features the log needs (and the client silently ignores some of them),
 * and a server that does not fsync every write can lose acknowledged events on power loss.
 */
import type { NatsConnection } from '@nats-io/transport-node';

/** The oldest server version Ormuz supports in production. */
export const MIN_PRODUCTION_NATS = [2, 11, 0] as const;
/** The first server version without the expected-sequence race at replicas 3. */
export const EXPECTED_SEQUENCE_RACE_FIXED = [2, 9, 21] as const;

export interface ServerCheck {
  readonly version: string;
  readonly warnings: string[];
}

function parseVersion(v: string): number[] {
  return v
    .split(/[.-]/)
    .slice(0, 3)
    .map((p) => Number.parseInt(p, 10) || 0);
}

/** Compares two versions: negative when a < b. */
export function compareVersions(a: readonly number[], b: readonly number[]): number {
  for (let i = 0; i < 3; i++) {
    const d = (a[i] ?? 0) - (b[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}

/**
 * Whether server `version` has the replicas-3 race (nats-server#4320): the expected sequence was checked before the
 * replicated write, not as part of it, so appends in flight together on one expected sequence could all be accepted.
 */
export function hasExpectedSequenceRace(version: string): boolean {
  return compareVersions(parseVersion(version), EXPECTED_SEQUENCE_RACE_FIXED) < 0;
}

/**
 * What is wrong with running production on server `version`: before {@link MIN_PRODUCTION_NATS} it lacks what the log
 * needs, and before {@link EXPECTED_SEQUENCE_RACE_FIXED} a stream at replicas 3 can accept two appends made on one
 * expected sequence (both writers are told they won; `checkStreamSequences` finds it).
 */
export function versionWarnings(version: string): string[] {
  const parsed = parseVersion(version);
  if (compareVersions(parsed, MIN_PRODUCTION_NATS) >= 0) return [];
  const race = hasExpectedSequenceRace(version)
    ? `; on a cluster with streams at replicas 3 it can also accept two appends made at once on one expected ` +
      `sequence (nats-server#4320, fixed in ${EXPECTED_SEQUENCE_RACE_FIXED.join('.')})`
    : '';
  return [
    `NATS server ${version} is older than ${MIN_PRODUCTION_NATS.join('.')}: fine for development, not for production ` +
      `(it lacks multi-filter consumers, per-message TTL, atomic batches and sync_interval${race}; use 2.12).`,
  ];
}

/**
 * Checks the connected server. `monitorUrl` (the server's HTTP monitoring port, e.g. `http://127.0.0.1:8222`) lets
 * the check read whether JetStream syncs every write; without it the warning says the setting cannot be confirmed.
 */
export async function checkServer(nc: NatsConnection, monitorUrl?: string): Promise<ServerCheck> {
  const version = nc.info?.version ?? 'unknown';
  const warnings = versionWarnings(version);
  if (!monitorUrl) {
    warnings.push(
      'Cannot confirm that JetStream syncs every write (set NATS_MONITOR_URL to check); production needs ' +
        '`sync_interval: always` so an acknowledged event survives power loss.',
    );
  } else {
    try {
      const res = await fetch(new URL('/varz', monitorUrl), { signal: AbortSignal.timeout(2000) });
      const varz = (await res.json()) as { jetstream?: { config?: { sync_always?: boolean } } };
      if (varz.jetstream?.config?.sync_always !== true) {
        warnings.push(
          'JetStream syncs lazily (sync_interval is not `always`): acknowledged events can be lost on power loss.',
        );
      }
    } catch (err) {
      warnings.push(`Could not read ${monitorUrl}/varz to check sync_interval: ${String(err)}.`);
    }
  }
  return { version, warnings };
}
