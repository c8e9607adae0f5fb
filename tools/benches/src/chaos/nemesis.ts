/**
 * The nemesis: while the load runs, it picks a random target from its list at random moments (from the run's seeded
 * generator), breaks it and, after a random outage, mends it. Faults overlap (a target takes seconds to start again
 * on a busy machine), at most `maxDown` targets at once and never one that is down already. A target is anything
 * with a name, a `kill()` and a `restart()`: a service replica (kill -9, start again), the NATS cluster (kill -9 one
 * node, start it again on its ports and store), a device (its connection dropped, or the phone rebooted). A new fault
 * is one more entry in the list.
 */

/** What the nemesis can break and mend. */
export interface NemesisTarget {
  readonly name: string;
  /** Breaks it: returns once it is down. */
  kill(): Promise<void>;
  /** Mends it: returns once it serves again. */
  restart(): Promise<unknown>;
}

export interface NemesisOptions {
  readonly targets: readonly NemesisTarget[];
  /** Uniform in [0, 1): the run's seeded generator. */
  readonly random: () => number;
  /** Longest pause between two faults, and longest outage, in ms. */
  readonly maxPauseMs: number;
  readonly maxOutageMs: number;
  /** Most targets down at once; default 2. */
  readonly maxDown?: number;
  readonly say: (line: string) => void;
}

/** Breaks targets one after another until stopped; counts what it broke by target name. */
export class Nemesis {
  /** Faults by target name. */
  readonly faults = new Map<string, number>();
  private readonly stopping = new AbortController();
  private loop: Promise<void> | undefined;

  constructor(private readonly opts: NemesisOptions) {}

  start(): void {
    this.loop ??= this.run();
  }

  /** Stops after the fault in progress is mended; rejects if a target could not be mended. */
  async stop(): Promise<void> {
    this.stopping.abort();
    await this.loop;
  }

  private async run(): Promise<void> {
    const { targets, random, say } = this.opts;
    const down = new Map<string, Promise<void>>();
    let failure: unknown;
    while (!this.stopping.signal.aborted && failure === undefined) {
      await this.pause(Math.floor(random() * this.opts.maxPauseMs));
      const up = targets.filter((t) => !down.has(t.name));
      if (this.stopping.signal.aborted || up.length === 0 || down.size >= (this.opts.maxDown ?? 2)) continue;
      const target = up[Math.floor(random() * up.length)]!;
      const outage = Math.floor(random() * this.opts.maxOutageMs);
      await target.kill();
      this.faults.set(target.name, (this.faults.get(target.name) ?? 0) + 1);
      const t0 = Date.now();
      const mend = (async () => {
        await new Promise((resolve) => setTimeout(resolve, outage));
        await target.restart();
        say(`nemesis: ${target.name} down for ${outage} ms, back after ${Date.now() - t0} ms`);
      })()
        .catch((err: unknown) => void (failure ??= err))
        .finally(() => down.delete(target.name));
      down.set(target.name, mend);
    }
    // Every target is mended before stop() returns.
    await Promise.all(down.values());
    if (failure !== undefined) throw failure;
  }

  private pause(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.stopping.signal.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
    });
  }
}
