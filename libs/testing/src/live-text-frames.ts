import type { LiveTextDeltaV1 } from '@ormuz/contracts';

/** A live text frame of turn 0, first attempt and try, as model-loop publishes it; `over` sets any field. */
export function liveTextFrame(seq: number, text: string, over: Partial<LiveTextDeltaV1> = {}): LiveTextDeltaV1 {
  return { turn: 0, attempt: 1, try: 1, seq, text, ...over };
}
