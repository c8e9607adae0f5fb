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

/** The stream that holds `subject` (`<namespace>.<context>.…`), by the rule of {@link streamName}. */
export function streamOfSubject(subject: string): string {
  const [namespace = '', context = ''] = subject.split('.');
  return streamName(namespace, context as ContextName);
}

/** Maximum size of one stored event, in bytes. Arguments are bounded well below this. */
export const MAX_EVENT_BYTES = 1024 * 1024;

/** How the streams are kept: on how many servers each one is replicated. */
export interface StreamOptions {
  /**
   * Servers holding a copy of each stream (JetStream `num_replicas`): 1 on a single server, 3 on a three-node cluster,
   * so that the loss of one server loses no acknowledged event and stops no append. Default 1. Services read it from
   * `ORMUZ_STREAM_REPLICAS` (libs/service-kit `BaseConfig.streamReplicas`).
   */
  readonly replicas?: number;
}

/** The configuration Ormuz wants for a context stream. */
export function streamConfig(
  namespace: string,
  context: ContextName,
  opts: StreamOptions = {},
): Partial<StreamConfig> & { name: string } {
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
    num_replicas: opts.replicas ?? 1,
  };
}

/**
 * Creates the streams if missing and brings their subjects up to date otherwise. Safe to call from every service.
 *
 * A stream with fewer replicas than asked for is raised to them (a single-server deployment moved to a cluster); one
 * with more is left as it is: a service started without the setting must not take copies away from the others', so
 * lowering the replicas is an operator's decision (`nats stream edit --replicas`).
 */
export async function ensureStreams(
  jsm: JetStreamManager,
  namespace: string,
  contexts: readonly ContextName[],
  opts: StreamOptions = {},
): Promise<void> {
  for (const context of contexts) {
    const config = streamConfig(namespace, context, opts);
    try {
      const info = await jsm.streams.info(config.name);
      const sameSubjects = JSON.stringify(info.config.subjects) === JSON.stringify(config.subjects);
      const replicas = Math.max(info.config.num_replicas, config.num_replicas ?? 1);
      if (!sameSubjects || replicas !== info.config.num_replicas) {
        await jsm.streams.update(config.name, { subjects: config.subjects, num_replicas: replicas });
      }
    } catch (err) {
      if (!isNotFound(err)) throw err;
      await addStream(jsm, config);
    }
  }
}

/** How long a stream's creation waits for the cluster to place its replicas, in ms. */
const PLACEMENT_PATIENCE_MS = 30_000;

/**
 * Creates the stream. A cluster that cannot place its replicas yet (a server still joining after a start, or one
 * restarting: "no suitable peers for placement") is asked again, with backoff, for up to PLACEMENT_PATIENCE_MS.
 */
async function addStream(jsm: JetStreamManager, config: Partial<StreamConfig> & { name: string }): Promise<void> {
  const deadline = Date.now() + PLACEMENT_PATIENCE_MS;
  for (let wait = 100; ; wait = Math.min(wait * 2, 2_000)) {
    try {
      await jsm.streams.add(config);
      return;
    } catch (addErr) {
      // Another service declared it between our info and add.
      if (String(addErr).includes('already in use')) return;
      if (!/no suitable peers|insufficient resources/i.test(String(addErr)) || Date.now() + wait > deadline)
        throw addErr;
      await new Promise((resolve) => setTimeout(resolve, wait));
    }
  }
}

function isNotFound(err: unknown): boolean {
  return err instanceof Error && (err.name === 'StreamNotFoundError' || /stream not found/i.test(err.message));
}
