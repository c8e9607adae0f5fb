/**
 * Typed views of what the log holds. Stored events are read back as `OrmuzEvent` (any type, `data: unknown`); the
 * contracts' guards (`isToolCallEvent`, `isConversationEvent`) tell one aggregate's events from the rest, and narrowing
 * with them gives {@link Enveloped} events whose `data` matches their `type`, so no reader has to cast.
 */
import type { EventDraft, OrmuzEvent } from '@ormuz/contracts';
import { ForeignEventError } from './errors.js';

/** Tells one family of events from any other, e.g. `isToolCallEvent` from @ormuz/contracts. */
export type EventGuard<E extends EventDraft> = (event: EventDraft) => event is E;

/**
 * An event as the log holds it (the whole envelope) whose `type` and `data` are those of one of the drafts `E`. This
 * is what a guard narrows an `OrmuzEvent` to; switching on `type` then narrows `data`.
 */
export type Enveloped<E extends EventDraft = EventDraft> = OrmuzEvent & E;

/**
 * How a consumer of the log names the events it reads. One that reads every event (an archive) needs no guard; one
 * typed for an aggregate's events must give the guard, and the runner checks every event with it before handing it
 * over (see {@link ForeignEventError}).
 */
export type ReadsEvents<E extends EventDraft> = EventDraft extends E
  ? { readonly accepts?: EventGuard<E> }
  : { readonly accepts: EventGuard<E> };

/** `event` narrowed with `guard`; throws {@link ForeignEventError} (naming `reader`) when it is another event. */
export function expectEvent<E extends EventDraft>(
  guard: EventGuard<E>,
  event: OrmuzEvent,
  where: { readonly subject: string; readonly seq: number; readonly reader: string },
): Enveloped<E> {
  if (!guard(event)) throw new ForeignEventError(where.subject, where.seq, event.type, where.reader);
  return event;
}
