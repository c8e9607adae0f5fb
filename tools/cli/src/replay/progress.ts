/**
 * The progress line `ormuz replay --out FILE` draws on a terminal: a bar over the stream sequences of the context being
 * read, events written, the rate and the time left. Drawn at most five times a second, on stderr only.
 */
const REDRAW_MS = 200;
const WIDTH = 24;

export class ReplayProgress {
  private drawn = 0;
  private readonly started = Date.now();

  constructor(private readonly stream: NodeJS.WriteStream) {}

  /** `seq` reached of `[first, high]` in `context`, with `events` written in all. */
  update(context: string, first: number, seq: number, high: number, events: number): void {
    const now = Date.now();
    if (now - this.drawn < REDRAW_MS) return;
    this.drawn = now;
    const fraction = high > first ? Math.min(1, Math.max(0, (seq - first) / (high - first))) : 1;
    const seconds = (now - this.started) / 1000;
    const rate = seconds > 0 ? events / seconds : 0;
    const eta = fraction > 0 ? ((1 - fraction) * seconds) / fraction : undefined;
    const filled = Math.round(fraction * WIDTH);
    const bar = `${'#'.repeat(filled)}${'-'.repeat(WIDTH - filled)}`;
    this.stream.write(
      `\r[${bar}] ${(fraction * 100).toFixed(0).padStart(3)}% ${context} seq ${seq}/${high}  ${events} events  ` +
        `${Math.round(rate)}/s  ETA ${eta === undefined ? '?' : `${Math.ceil(eta)}s`}   `,
    );
  }

  done(events: number): void {
    const seconds = (Date.now() - this.started) / 1000;
    this.stream.write(`\r${' '.repeat(100)}\r${events} events in ${seconds.toFixed(1)} s\n`);
  }
}
