import { Inject, Injectable } from '@nestjs/common';
import { liveConversationSubject, MAX_TEXT_DELTA_CHARS, type LiveTextDeltaV1 } from '@ormuz/contracts';
import { INFRA, type Infrastructure } from '@ormuz/service-kit';

/** Where one model turn's text goes live: its conversation, turn and the loop's attempt at it. */
export interface LiveTurn {
  readonly tenant: string;
  readonly conversationId: string;
  readonly turn: number;
  /** The loop's attempt at the turn, from 1. */
  readonly attempt: number;
}

/**
 * Publishes the text of a streamed model reply while it arrives, as `LiveTextDeltaV1` frames on the conversation's
 * live subject (core NATS, `liveConversationSubject`), for `ormuz agent run` to print as it comes. Nothing is stored
 * and nothing waits: a frame nobody hears is dropped by NATS, and the reply recorded on the log stays the one truth.
 */
@Injectable()
export class LiveTextPublisher {
  constructor(@Inject(INFRA) private readonly infra: Infrastructure) {}

  /**
   * The `onText` of one model turn: numbers the pieces of each transport try (`seq` from 0, again from 0 for the
   * next try, whose text starts over) and publishes them, a piece longer than a frame holds as several frames.
   */
  forTurn(live: LiveTurn): (delta: string, attempt: number) => void {
    const subject = liveConversationSubject(this.infra.config.namespace, live.tenant, live.conversationId);
    let currentTry = 0;
    let seq = 0;
    return (delta, attempt) => {
      if (attempt !== currentTry) {
        currentTry = attempt;
        seq = 0;
      }
      for (let at = 0; at < delta.length; at += MAX_TEXT_DELTA_CHARS) {
        const frame: LiveTextDeltaV1 = {
          turn: live.turn,
          attempt: live.attempt,
          try: currentTry,
          seq: seq++,
          text: delta.slice(at, at + MAX_TEXT_DELTA_CHARS),
        };
        this.infra.nc.publish(subject, JSON.stringify(frame));
      }
    };
  }
}
