/**
 * Errors of the event log. Each has a stable `code`; callers test them with the `isXxxError` predicates.
 */
import { OrmuzError } from '@ormuz/contracts';

/** Another writer appended to the subject since the state was loaded. Reload, re-decide and retry. */
export class ConcurrencyConflictError extends OrmuzError {
  readonly code = 'concurrency_conflict';
  constructor(
    readonly subject: string,
    readonly expectedSequence: number,
  ) {
    super(
      `Another writer appended to ${subject} after sequence ${expectedSequence}; reload the aggregate and decide again.`,
    );
  }
}

/** The stream that should hold the subject does not exist; the owning service has not declared it yet. */
export class StreamMissingError extends OrmuzError {
  readonly code = 'stream_missing';
  constructor(readonly target: string) {
    super(`No JetStream stream holds ${target}. Start the service that owns it, or run \`ormuz migrate\`, then retry.`);
  }
}

/** Retries on conflict were exhausted: the aggregate is under heavy contention. */
export class RetriesExhaustedError extends OrmuzError {
  readonly code = 'retries_exhausted';
  constructor(
    readonly subject: string,
    readonly attempts: number,
  ) {
    super(`Gave up appending to ${subject} after ${attempts} conflicting attempts; try the command again.`);
  }
}

/** A stored message could not be read back as an Ormuz event. */
export class CorruptEventError extends OrmuzError {
  readonly code = 'corrupt_event';
  constructor(
    readonly subject: string,
    readonly sequence: number,
    reason: string,
  ) {
    super(`The event at sequence ${sequence} on ${subject} cannot be read: ${reason}.`);
  }
}

/**
 * A stored event of a type its reader does not read: a call's subject holding a conversation event, say. Only a writer
 * that bypassed the aggregate's decider can put it there, so it is reported (a projection or reaction parks it, a load
 * refuses the aggregate) rather than handed to code written for other events.
 */
export class ForeignEventError extends OrmuzError {
  readonly code = 'foreign_event';
  constructor(
    readonly subject: string,
    readonly sequence: number,
    readonly eventType: string,
    readonly reader: string,
  ) {
    super(`The event at sequence ${sequence} on ${subject} is ${eventType}, which ${reader} does not read.`);
  }
}

/** The NATS server cannot be reached at all. */
export class NatsUnavailableError extends OrmuzError {
  readonly code = 'nats_unavailable';
  constructor(
    readonly url: string,
    reason: string,
  ) {
    super(
      `NATS is not reachable at ${url} (${reason}). Start it with JetStream enabled, for example ` +
        '`nats-server -js` or `docker compose up nats`, or point NATS_URL at a running server.',
    );
  }
}

/**
 * The NATS server refused the connection's credentials (or its lack of them). A server running the shipped
 * authorization (infra/nats/authorization.conf) admits no anonymous client: every process connects as its own user.
 */
export class NatsAuthorizationError extends OrmuzError {
  readonly code = 'nats_unauthorized';
  constructor(
    readonly url: string,
    readonly user: string | undefined,
    reason: string,
  ) {
    super(
      user === undefined
        ? `NATS at ${url} refused a connection without credentials (${reason}). Set NATS_USER and NATS_PASSWORD to ` +
            "this process's NATS user (see infra/README.md, NATS users)."
        : `NATS at ${url} refused user ${user} (${reason}). Check NATS_PASSWORD, and that the server's configuration ` +
            `has a user ${user} with that password (see infra/README.md, NATS users).`,
    );
  }
}

export const isConcurrencyConflictError = (e: unknown): e is ConcurrencyConflictError =>
  e instanceof ConcurrencyConflictError;
export const isForeignEventError = (e: unknown): e is ForeignEventError => e instanceof ForeignEventError;
export const isStreamMissingError = (e: unknown): e is StreamMissingError => e instanceof StreamMissingError;
export const isNatsUnavailableError = (e: unknown): e is NatsUnavailableError => e instanceof NatsUnavailableError;
export const isNatsAuthorizationError = (e: unknown): e is NatsAuthorizationError =>
  e instanceof NatsAuthorizationError;

/**
 * The server did not acknowledge an append in time, even after retrying with the same message ids. The events may
 * or may not be stored: a lost acknowledgement is not proof either way. Retrying the command is safe (the retry
 * reloads the aggregate, and a republished event id is deduplicated by the server).
 */
export class AppendTimeoutError extends OrmuzError {
  readonly code = 'append_unacknowledged';
  constructor(readonly subject: string) {
    super(
      `NATS did not acknowledge the append to ${subject}; it may or may not be stored. Retry the command: it is safe.`,
    );
  }
}

export const isAppendTimeoutError = (e: unknown): e is AppendTimeoutError => e instanceof AppendTimeoutError;

/** A time-travel query named a time after now: the log can only say how things stood, not how they will. */
export class AsOfInFutureError extends OrmuzError {
  readonly code = 'as_of_in_future';
  constructor(
    readonly asOf: string,
    readonly now: string,
  ) {
    super(`as_of ${asOf} is in the future (it is now ${now}); give a time up to now, or a stream sequence.`);
  }
}
