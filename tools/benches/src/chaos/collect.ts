/**
 * What the checker reads, gathered from the running platform: every event of the calls stream from sequence 1, the
 * headers of every message of every stream of the run's namespace (for the sequence check), and each read model
 * compared row by row with a rebuild from the log (the `consumers.rebuild` behind `ormuz projections rebuild --diff`).
 */
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { contextFilter, SERVICES, type RpcName } from '@ormuz/contracts';
import { readLoggedMessages, replay, streamName, type LoggedMessage } from '@ormuz/event-log';
import { callRpc, type Credential } from '@ormuz/service-kit';
import type { LoggedCallEvent, RebuildSeen } from './checker.js';

/** Every event of the calls stream, oldest first; an unreadable message is an error. */
export async function readCallEvents(nc: NatsConnection, namespace: string): Promise<LoggedCallEvent[]> {
  const events: LoggedCallEvent[] = [];
  for await (const item of replay(jetstream(nc), {
    stream: streamName(namespace, 'calls'),
    filterSubject: contextFilter(namespace, 'calls'),
  })) {
    if (!item.event) throw new Error(`unreadable calls message at ${item.seq}: ${item.error}`);
    const e = item.event;
    events.push({ type: e.type, callId: e.subject, time: e.time, data: e.data as Record<string, unknown> });
  }
  return events;
}

/** Every stream of the namespace (`<NAMESPACE>_<CONTEXT>`), by name: its messages' sequences and append headers. */
export async function readStreams(
  nc: NatsConnection,
  namespace: string,
): Promise<Map<string, readonly LoggedMessage[]>> {
  const prefix = `${namespace.toUpperCase()}_`;
  const streams = new Map<string, readonly LoggedMessage[]>();
  for await (const name of (await jetstreamManager(nc)).streams.names()) {
    if (name.startsWith(prefix)) streams.set(name, await readLoggedMessages(jetstream(nc), name));
  }
  return streams;
}

/** A rebuild replays a whole stream and compares every row. */
const REBUILD_MS = 600_000;

/**
 * Rebuilds every projection that declares its tables, of every service that answers, into a schema of its own, and
 * compares it with the live read model. Needs an admin of tenant `*`.
 */
export async function rebuildReadModels(
  nc: NatsConnection,
  namespace: string,
  admin: Credential,
  say: (line: string) => void,
): Promise<RebuildSeen[]> {
  const seen: RebuildSeen[] = [];
  for (const service of SERVICES) {
    const status = await callRpc(nc, namespace, `${service}.consumers.status` as RpcName, {} as never, {
      credential: admin,
      timeoutMs: 10_000,
    }).catch(() => undefined);
    const consumers = (status as { consumers?: { name: string; kind: string }[] } | undefined)?.consumers ?? [];
    for (const c of consumers.filter((c) => c.kind === 'projection')) {
      const into = `chaos_rebuild_${seen.length}`;
      try {
        const reply = await callRpc(
          nc,
          namespace,
          `${service}.consumers.rebuild`,
          { name: c.name, into, diff: true, swap: false, force: true },
          { credential: admin, timeoutMs: REBUILD_MS },
        );
        const differing = (reply.tables ?? []).reduce((n, t) => n + t.differing, 0);
        say(`read model ${c.name} (${service}) rebuilt up to ${reply.checkpoint}: ${differing} rows differ`);
        seen.push({ projection: c.name, differing });
      } catch (err) {
        // A projection that keeps no tables of its own has nothing to compare.
        if (/declares no tables/.test((err as Error).message)) continue;
        seen.push({ projection: c.name, differing: 0, error: (err as Error).message });
      }
    }
  }
  return seen;
}
