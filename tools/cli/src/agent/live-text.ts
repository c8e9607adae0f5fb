/**
 * The live text of a run's model replies, put in order: frames (`LiveTextDeltaV1`) arrive on core NATS, where one may
 * be lost, come twice or come late, and this yields each turn's text once, in order, and only while it is the turn the
 * run waits for. It never guesses: after a gap it waits, and what it showed is only ever a prefix the recorded reply is
 * compared with (`settle`), so a lost or misplaced frame can cost the live view but never the recorded text.
 */
import type { LiveTextDeltaV1 } from '@ormuz/contracts';

/** Text of the current turn ready to show; `restart` when it starts the turn's text over (a later take). */
export interface LivePiece {
  readonly turn: number;
  readonly restart: boolean;
  readonly text: string;
}

/** Most frames kept waiting for a gap to fill or for their turn; past it, frames are dropped (the recorded reply wins). */
const MAX_WAITING_FRAMES = 10_000;

/** Orders takes of one turn: the loop's attempt first, then the transport's try within it. */
function compareTakes(a: Take, b: Take): number {
  return a.attempt - b.attempt || a.try - b.try;
}

type Take = Pick<LiveTextDeltaV1, 'attempt' | 'try'>;

export class LiveText {
  /** The model turn the run waits for: the one after the last recorded reply it showed. */
  private current = 0;
  /** The take of the current turn being shown, and the next `seq` of it to show. */
  private shownTake: Take | undefined;
  private nextSeq = 0;
  /** The current turn's text shown so far (of its take). */
  private shownText = '';
  /** Frames not shown yet, by `turn/attempt/try/seq`. */
  private readonly waiting = new Map<string, LiveTextDeltaV1>();

  /** Keeps a frame for later; a frame of a settled turn, a stale take, one already shown or one twice is dropped. */
  receive(frame: LiveTextDeltaV1): void {
    if (frame.turn < this.current) return;
    if (frame.turn === this.current && this.shownTake) {
      const order = compareTakes(frame, this.shownTake);
      if (order < 0 || (order === 0 && frame.seq < this.nextSeq)) return;
    }
    if (this.waiting.size >= MAX_WAITING_FRAMES) return;
    this.waiting.set(`${frame.turn}/${frame.attempt}/${frame.try}/${frame.seq}`, frame);
  }

  /**
   * The current turn's text that can be shown now, once: of the latest take heard of (a later take starts the text
   * over, `restart`), from the next `seq` on while no frame is missing. Undefined when there is nothing new.
   */
  ready(): LivePiece | undefined {
    let restart = false;
    const latest = this.latestTake();
    if (latest && (!this.shownTake || compareTakes(latest, this.shownTake) > 0)) {
      restart = this.shownText !== '';
      this.shownTake = latest;
      this.nextSeq = 0;
      this.shownText = '';
      this.dropOlderTakes(latest);
    }
    let text = '';
    for (const take = this.shownTake; take; this.nextSeq++) {
      const key = `${this.current}/${take.attempt}/${take.try}/${this.nextSeq}`;
      const frame = this.waiting.get(key);
      if (!frame) break;
      this.waiting.delete(key);
      text += frame.text;
    }
    this.shownText += text;
    return restart || text !== '' ? { turn: this.current, restart, text } : undefined;
  }

  /** The text of the current turn shown so far; '' when nothing was shown. */
  get shown(): string {
    return this.shownText;
  }

  /** The turn the run waits for. */
  get turn(): number {
    return this.current;
  }

  /**
   * The recorded reply of `turn` was shown: returns the live text shown of it (to compare with the recorded text),
   * and waits for the next turn from now on, dropping every frame of this one.
   */
  settle(turn: number): string {
    const shown = turn === this.current ? this.shownText : '';
    if (turn >= this.current) {
      this.current = turn + 1;
      this.shownTake = undefined;
      this.nextSeq = 0;
      this.shownText = '';
      for (const [key, frame] of this.waiting) if (frame.turn <= turn) this.waiting.delete(key);
    }
    return shown;
  }

  private latestTake(): Take | undefined {
    let latest: Take | undefined;
    for (const frame of this.waiting.values()) {
      if (frame.turn === this.current && (!latest || compareTakes(frame, latest) > 0)) latest = frame;
    }
    return latest;
  }

  private dropOlderTakes(take: Take): void {
    for (const [key, frame] of this.waiting) {
      if (frame.turn === this.current && compareTakes(frame, take) < 0) this.waiting.delete(key);
    }
  }
}
