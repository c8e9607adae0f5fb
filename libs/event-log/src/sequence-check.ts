/**
 * Reads a stream for the traces of a broken append guarantee, for chaos runs and the cluster tests.
 *
 * Every decision is appended with `Nats-Expected-Last-Subject-Sequence` (see {@link EventStore.append}) and the server
 * stores that header with the message. On a healthy log each such message's expectation is the sequence of the
 * subject's message before it (0 for the first): the server accepted it only because the subject stood there. A
 * message whose expectation names another sequence was accepted on a stale view of its subject: two writers both
 * decided from sequence N and both were told they won. nats-server before 2.9.21 can do this at replicas 3 (a race
 * between a leader change and expected-sequence publishes), so a chaos run on a cluster checks every stream with
 * {@link checkStreamSequences} rather than trusting that it cannot happen.
 *
 * A message id stored twice is the other trace: the de-duplication that makes a retried append safe did not hold.
 */
import { DeliverPolicy, type JetStreamClient } from '@nats-io/jetstream';

/** What the check reads of one stored message. */
export interface LoggedMessage {
  readonly seq: number;
  readonly subject: string;
  /** Its `Nats-Expected-Last-Subject-Sequence`; undefined for a message appended without one (`EventStore.record`). */
  readonly expectedLastSubjectSequence?: number | undefined;
  /** Its `Nats-Msg-Id`, if any. */
  readonly msgId?: string | undefined;
}

/** One trace of a broken guarantee, naming the messages involved. */
export type SequenceAnomaly =
  | {
      /** Stored although its subject's last message was `previous`, not the `expected` it was appended on. */
      readonly kind: 'stale_expectation';
      readonly subject: string;
      readonly seq: number;
      readonly expected: number;
      readonly previous: number;
    }
  | {
      /** One message id stored twice: the append de-duplication did not hold. */
      readonly kind: 'duplicate_message_id';
      readonly msgId: string;
      readonly subject: string;
      readonly seq: number;
      readonly firstSeq: number;
    };

export const EXPECTED_LAST_SUBJECT_SEQUENCE_HEADER = 'Nats-Expected-Last-Subject-Sequence';
export const MSG_ID_HEADER = 'Nats-Msg-Id';

/** The anomalies among `messages`, given in stream order (the whole stream, or it from sequence 1). */
export function findSequenceAnomalies(messages: Iterable<LoggedMessage>): SequenceAnomaly[] {
  const lastOnSubject = new Map<string, number>();
  const firstWithId = new Map<string, number>();
  const anomalies: SequenceAnomaly[] = [];
  for (const m of messages) {
    const previous = lastOnSubject.get(m.subject) ?? 0;
    if (m.expectedLastSubjectSequence !== undefined && m.expectedLastSubjectSequence !== previous) {
      anomalies.push({
        kind: 'stale_expectation',
        subject: m.subject,
        seq: m.seq,
        expected: m.expectedLastSubjectSequence,
        previous,
      });
    }
    if (m.msgId !== undefined) {
      const firstSeq = firstWithId.get(m.msgId);
      if (firstSeq === undefined) firstWithId.set(m.msgId, m.seq);
      else anomalies.push({ kind: 'duplicate_message_id', msgId: m.msgId, subject: m.subject, seq: m.seq, firstSeq });
    }
    lastOnSubject.set(m.subject, m.seq);
  }
  return anomalies;
}

/** Says an anomaly in a sentence, for a chaos run's report or a test's failure. */
export function describeAnomaly(a: SequenceAnomaly): string {
  return a.kind === 'stale_expectation'
    ? `${a.subject} #${a.seq} was appended expecting the subject at ${a.expected}, but it stood at ${a.previous}: ` +
        'two writers were both told they won (the expected-sequence race of nats-server < 2.9.21 at replicas 3?)'
    : `${a.subject} #${a.seq} repeats message id ${a.msgId} of #${a.firstSeq}: a retried append was stored twice`;
}

/**
 * Reads every message of `stream` (headers only, through an ordered consumer: nothing durable is left on the server)
 * and returns {@link findSequenceAnomalies} of them.
 */
export async function checkStreamSequences(js: JetStreamClient, stream: string): Promise<SequenceAnomaly[]> {
  return findSequenceAnomalies(await readLoggedMessages(js, stream));
}

/** Every message of `stream` as the check reads it, in stream order (headers only, through an ordered consumer). */
export async function readLoggedMessages(js: JetStreamClient, stream: string): Promise<LoggedMessage[]> {
  const consumer = await js.consumers.get(stream, { deliver_policy: DeliverPolicy.All, headers_only: true });
  // An empty stream: stop before consuming, since closing a consume that was never read waits forever.
  const info = await consumer.info(false);
  if (info.num_pending === 0) return [];
  const logged: LoggedMessage[] = [];
  const messages = await consumer.consume({ max_messages: 1024 });
  try {
    for await (const m of messages) {
      const expected = m.headers?.get(EXPECTED_LAST_SUBJECT_SEQUENCE_HEADER);
      const msgId = m.headers?.get(MSG_ID_HEADER);
      logged.push({
        seq: m.seq,
        subject: m.subject,
        expectedLastSubjectSequence: expected ? Number(expected) : undefined,
        msgId: msgId || undefined,
      });
      if (m.info.pending === 0) break;
    }
  } finally {
    await messages.close().catch(() => undefined);
  }
  return logged;
}
