/**
 * Keeps the demo's services running. A service that exits while the demo runs is reported, with how it ended and
 * where its log is, and started again after a backoff (0.5 s, 1 s, 2 s, 4 s, then 8 s), at most `maxRestarts`
 * times per service; after that it is reported as given up and left down. A restarted service keeps the ports it
 * had, so the URLs the demo printed stay right and the simulated phone reconnects by itself.
 */
import type { ServiceHealth, ServiceName, ServiceProcess } from '../services.js';

export interface SupervisorOptions {
  /** Starts one service with extra environment (its pinned ports). */
  readonly spawn: (name: ServiceName, env: NodeJS.ProcessEnv) => ServiceProcess;
  /** Resolves once the service answers its health command; rejects when it exits first or does not answer in time. */
  readonly waitHealthy: (proc: ServiceProcess) => Promise<ServiceHealth>;
  /** Where the supervisor says what happened (one line each). */
  readonly report: (line: string) => void;
  /** Restarts allowed per service. Default {@link DEFAULT_MAX_RESTARTS}. */
  readonly maxRestarts?: number;
  /** Delay before the n-th restart (n from 1), in ms. Default 500 ms doubling, at most 8 s. */
  readonly backoffMs?: (restart: number) => number;
}

export const DEFAULT_MAX_RESTARTS = 5;

/** The delay before the n-th restart: 500 ms, doubling, at most 8 s. */
export const defaultBackoffMs = (restart: number): number => Math.min(8_000, 500 * 2 ** (restart - 1));

export class ServiceSupervisor {
  private stopping = false;
  private readonly current = new Map<ServiceName, ServiceProcess>();
  private readonly env = new Map<ServiceName, NodeJS.ProcessEnv>();
  private readonly restarts = new Map<ServiceName, number>();
  private readonly timers = new Set<NodeJS.Timeout>();

  constructor(private readonly opts: SupervisorOptions) {}

  /** The processes as they are now (a restarted service's newest process). */
  get processes(): ServiceProcess[] {
    return [...this.current.values()];
  }

  /** How many times `name` has been restarted. */
  restartsOf(name: ServiceName): number {
    return this.restarts.get(name) ?? 0;
  }

  /** Watches `proc`; if it exits before {@link stop}, it is started again with `env` (its pinned ports). */
  watch(proc: ServiceProcess, env: NodeJS.ProcessEnv = {}): void {
    this.current.set(proc.name, proc);
    this.env.set(proc.name, env);
    const onExit = (code: number | null, signal: NodeJS.Signals | null) => this.exited(proc, code, signal);
    if (proc.exited) onExit(proc.child.exitCode, proc.child.signalCode);
    else proc.child.once('exit', onExit);
  }

  /** Stops watching, cancels pending restarts and returns the processes to stop. */
  stop(): ServiceProcess[] {
    this.stopping = true;
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    return this.processes;
  }

  private exited(proc: ServiceProcess, code: number | null, signal: NodeJS.Signals | null): void {
    if (this.stopping || this.current.get(proc.name) !== proc) return;
    const how = signal ? `was killed (${signal})` : `exited with code ${code}`;
    const max = this.opts.maxRestarts ?? DEFAULT_MAX_RESTARTS;
    const n = this.restartsOf(proc.name) + 1;
    if (n > max) {
      this.opts.report(
        `${proc.name} ${how}; not restarting it: it was restarted ${max} times already. Its log: ${proc.logFile}. ` +
          'Fix the cause, then start it by hand (CONTRIBUTING.md, "Restarting one service").',
      );
      return;
    }
    this.restarts.set(proc.name, n);
    const delay = (this.opts.backoffMs ?? defaultBackoffMs)(n);
    this.opts.report(
      `${proc.name} ${how}; restarting it in ${delay} ms (restart ${n} of ${max}). Its log: ${proc.logFile}`,
    );
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      void this.restart(proc.name);
    }, delay);
    this.timers.add(timer);
  }

  private async restart(name: ServiceName): Promise<void> {
    if (this.stopping) return;
    const proc = this.opts.spawn(name, this.env.get(name) ?? {});
    this.watch(proc, this.env.get(name));
    try {
      const health = await this.opts.waitHealthy(proc);
      if (!this.stopping) this.opts.report(`${name} is back (pid ${health.pid})`);
    } catch (err) {
      // An exit during start-up is handled (and reported) by the exit watcher; only a hang is reported here.
      if (!proc.exited && !this.stopping)
        this.opts.report(`${name} restarted but is not answering yet: ${(err as Error).message}`);
    }
  }
}
