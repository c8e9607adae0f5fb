/**
 * Streams are declared in code and created idempotently at start. Each context owns one stream whose subjects
 * are `<namespace>.<context>.>` (see `aggregateSubject` in @ormuz/contracts).
 */
import {
  DiscardPolicy,
  RetentionPolicy,
  StorageType,
  type JetStreamManager,
  type StreamConfig,
} from '@nats-io/jetstream';
import { contextFilter, type ContextName } from '@ormuz/contracts';

/** Name of a context's stream in a namespace: `ORMUZ_CALLS`, `T1A2B3C4_CALLS`. */
export function streamName(namespace: string, context: ContextName): string {
  return `${namespace.toUpperCase()}_${context.toUpperCase()}`;
}

/** Maximum size of one stored event, in bytes. Arguments are bounded well below this. */
export const MAX_EVENT_BYTES = 1024 * 1024;

/** The configuration Ormuz wants for a context stream. */
export function streamConfig(namespace: string, context: ContextName): Partial<StreamConfig> & { name: string } {
  return {
    name: streamName(namespace, context),
    subjects: [contextFilter(namespace, context)],
    storage: StorageType.File,
    retention: RetentionPolicy.Limits,
    discard: DiscardPolicy.Old,
    // The log is append-only: no message may be deleted or the stream purged by a client.
    deny_delete: true,
    deny_purge: true,
    allow_direct: true,
    max_msg_size: MAX_EVENT_BYTES,
    // msgID de-duplication window, in nanoseconds: long enough to cover a client's retry after a reconnect.
    duplicate_window: 2 * 60 * 1_000_000_000,
    num_replicas: 1,
  };
}

/** Creates the streams if missing and brings their subjects up to date otherwise. Safe to call from every service. */
export async function ensureStreams(
  jsm: JetStreamManager,
  namespace: string,
  contexts: readonly ContextName[],
): Promise<void> {
  for (const context of contexts) {
    const config = streamConfig(namespace, context);
    try {
      const info = await jsm.streams.info(config.name);
      const same = JSON.stringify(info.config.subjects) === JSON.stringify(config.subjects);
      if (!same) await jsm.streams.update(config.name, { subjects: config.subjects });
    } catch (err) {
      if (!isNotFound(err)) throw err;
      try {
        await jsm.streams.add(config);
      } catch (addErr) {
        // Another service declared it between our info and add.
        if (!String(addErr).includes('already in use')) throw addErr;
      }
    }
  }
}

function isNotFound(err: unknown): boolean {
  return err instanceof Error && (err.name === 'StreamNotFoundError' || /stream not found/i.test(err.message));
}
