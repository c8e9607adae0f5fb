/**
 * What `ormuz agent run` prints: the recorded steps (`RunSteps`) and, between them, the live text of the model reply
 * the run waits for (`LiveText`), as a person reads it or as NDJSON (`--json`). The recorded reply is the truth: live
 * text is only ever printed as a beginning of it, and when what was printed live is not how the recorded reply begins
 * (a frame lost, a stream started over), the recorded reply is printed in full after it.
 */
import type { LiveTextDeltaV1 } from '@ormuz/contracts';
import { LiveText } from './live-text.js';
import { renderStep, type RunStep } from './run-steps.js';

/**
 * A piece of the text of the model reply being written (`--json` only; text mode writes it as it comes). `restart`:
 * the model's reply started over (the loop asked again, or a broken stream was retried), so the text of this turn
 * printed before is void. The `model` step of the turn still follows, with the whole recorded text.
 */
export interface TextDeltaStep {
  readonly step: 'text_delta';
  readonly turn: number;
  readonly restart: boolean;
  readonly text: string;
}

/** Said at the end of a live line whose reply started over. */
const STARTED_OVER = ' [the model started its reply over]';

export class RunPrinter {
  private readonly live = new LiveText();
  private started = false;
  /** The tool requests of the last recorded reply whose result was not printed yet: the next turn's text waits. */
  private unanswered = new Set<string>();
  /** True while a line of live text is open (text mode). */
  private open = false;

  constructor(
    private readonly json: boolean,
    private readonly write: (text: string) => void,
  ) {}

  /** A frame of live text heard: printed now when its turn is the one the run waits for, else kept. */
  frame(frame: LiveTextDeltaV1): void {
    this.live.receive(frame);
    this.printLive();
  }

  /** Steps read from the recorded conversation, in order. */
  steps(steps: readonly RunStep[]): void {
    for (const s of steps) {
      if (s.step === 'model') {
        // What arrived live of this reply first, so that the reply completes it.
        this.printLive();
        this.model(s);
        continue;
      }
      if (s.step === 'started') this.started = true;
      if (s.step === 'tool_result') this.unanswered.delete(s.call_id);
      this.line(this.json ? JSON.stringify(s) : renderStep(s));
    }
    this.printLive();
  }

  private model(s: Extract<RunStep, { step: 'model' }>): void {
    const shown = this.live.settle(s.turn);
    this.unanswered = new Set(s.tool_requests.map((r) => r.call_id));
    if (!this.json && this.open && shown !== '' && s.text.startsWith(shown)) {
      // The live line is how the recorded reply begins: it is finished, not printed again.
      this.write(`${s.text.slice(shown.length)}\n`);
      this.open = false;
      this.line(renderStep({ ...s, text: '' }));
      return;
    }
    this.line(this.json ? JSON.stringify(s) : renderStep(s));
  }

  private printLive(): void {
    if (!this.started || this.unanswered.size > 0) return;
    const piece = this.live.ready();
    if (!piece) return;
    if (this.json) {
      const step: TextDeltaStep = { step: 'text_delta', ...piece };
      this.line(JSON.stringify(step));
      return;
    }
    if (piece.restart && this.open) {
      this.write(`${STARTED_OVER}\n`);
      this.open = false;
    }
    if (piece.text === '') return;
    if (!this.open) this.write('model: ');
    this.open = true;
    this.write(piece.text);
  }

  /** One or more whole lines; a live line still open is ended first. Nothing for ''. */
  private line(text: string): void {
    if (text === '') return;
    if (this.open) this.write('\n');
    this.open = false;
    this.write(`${text}\n`);
  }
}
