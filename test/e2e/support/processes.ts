/**
 * Child processes for end-to-end tests: the built CLI, a private nats-server. Every process is started in its own
 * process group and remembered, so `killAll()` in `afterAll` ends it together with whatever it spawned (the CLI's
 * `demo` starts five services) even when a test failed half-way. Nothing here sleeps: waits poll for a condition and
 * are bounded.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { waitFor } from '@ormuz/testing';

/** The repository root (this file is test/e2e/support/processes.ts). */
export const ROOT = join(import.meta.dirname, '..', '..', '..');

/** Where the services write their logs when the CLI's `demo` starts them. */
export const DEMO_LOG_DIR = join(ROOT, '.ormuz', 'logs');

/** A started process with its output so far. */
export interface Tracked {
  readonly child: ChildProcess;
  readonly pid: number;
  /** Everything written to stdout / stderr until now. */
  stdout(): string;
  stderr(): string;
  /** Resolves when the process has exited (never rejects). */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  hasExited(): boolean;
  /**
   * When each stdout chunk and the exit reached this process, in ms after the spawn: a test that failed on timing
   * tells whether the child was slow or this process saw its output late.
   */
  timeline(): string;
}

const running = new Set<Tracked>();

/**
 * Spawns `command` in a new process group (so its own children can be signalled with it) and tracks it until exit.
 */
export function spawnTracked(command: string, args: readonly string[], env: NodeJS.ProcessEnv = {}): Tracked {
  const child = spawn(command, args, {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  if (child.pid === undefined) throw new Error(`Could not start ${command} ${args.join(' ')}.`);
  let out = '';
  let err = '';
  let done = false;
  const spawnedAt = performance.now();
  const arrivals: string[] = [];
  const arrived = (what: string) => arrivals.push(`${(performance.now() - spawnedAt).toFixed(0)} ms ${what}`);
  child.stdout?.on('data', (d: Buffer) => {
    out += d.toString();
    arrived(`stdout ${d.length} B`);
  });
  child.stderr?.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once('exit', (code, signal) => {
      arrived(`exit ${code ?? signal}`);
      done = true;
      resolve({ code, signal });
    });
    child.once('error', () => {
      done = true;
      resolve({ code: null, signal: null });
    });
  });
  const tracked: Tracked = {
    child,
    pid: child.pid,
    stdout: () => out,
    stderr: () => err,
    exited,
    hasExited: () => done,
    timeline: () => arrivals.join(', '),
  };
  running.add(tracked);
  void exited.then(() => running.delete(tracked));
  return tracked;
}

function signalGroup(t: Tracked, signal: NodeJS.Signals): void {
  try {
    process.kill(-t.pid, signal);
  } catch {
    // The group is gone already.
  }
}

/**
 * Ends a process and its group: SIGTERM (services shut down cleanly), then SIGKILL after `graceMs`. The group is
 * signalled even when the leader has already exited, because the CLI's services may outlive a killed CLI.
 */
export async function stop(t: Tracked, graceMs = 5_000): Promise<void> {
  signalGroup(t, 'SIGTERM');
  let timer: NodeJS.Timeout | undefined;
  const grace = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, graceMs);
  });
  await Promise.race([t.exited, grace]);
  clearTimeout(timer);
  signalGroup(t, 'SIGKILL');
  await t.exited;
}

/** Stops every process this test file started and has not seen exit. Call it in `afterAll`. */
export async function killAll(): Promise<void> {
  await Promise.all([...running].map((t) => stop(t)));
}

/**
 * Waits until `t` has exited, at most `timeoutMs`; on time-out it stops the process group and throws, so a hung
 * command fails the test with its output instead of hanging Jest.
 */
export async function exitWithin(
  t: Tracked,
  timeoutMs: number,
  what: string,
): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(resolve, timeoutMs, 'timeout');
  });
  const result = await Promise.race([t.exited, expired]);
  clearTimeout(timer);
  if (result === 'timeout') {
    await stop(t, 2_000);
    throw new Error(`${what} did not exit within ${timeoutMs} ms.\nstdout:\n${t.stdout()}\nstderr:\n${t.stderr()}`);
  }
  return result;
}

/** The built CLI's entry, exactly as `npm start` runs it; fails clearly when the build is missing. */
export function cliEntry(): string {
  const entry = join(ROOT, 'tools', 'cli', 'dist', 'main.js');
  if (!existsSync(entry)) throw new Error(`${entry} does not exist: run \`npm run build\` before the e2e tests.`);
  return entry;
}

/** A nats-server with JetStream on a fixed port and store directory, which can be killed and started again. */
export class NatsServerProcess {
  private current: Tracked | undefined;
  private static readonly binary = process.env.NATS_SERVER_BIN || '/usr/sbin/nats-server';

  constructor(
    readonly port: number,
    readonly storeDir: string,
  ) {}

  get url(): string {
    return `nats://127.0.0.1:${this.port}`;
  }

  /** Starts the server and waits for it to log that it is ready (JetStream recovered from the store). */
  async start(timeoutMs = 10_000): Promise<void> {
    if (!existsSync(NatsServerProcess.binary)) {
      throw new Error(`No nats-server at ${NatsServerProcess.binary}; install it or set NATS_SERVER_BIN.`);
    }
    const t = spawnTracked(NatsServerProcess.binary, [
      '-js',
      '-a',
      '127.0.0.1',
      '-p',
      String(this.port),
      '-sd',
      this.storeDir,
    ]);
    this.current = t;
    await waitFor(
      () => {
        if (t.hasExited()) throw new Error(`nats-server exited: ${t.stderr()}`);
        return t.stderr().includes('Server is ready');
      },
      { timeoutMs, intervalMs: 20, message: `nats-server on port ${this.port} to be ready` },
    );
  }

  /** SIGKILLs the server (no clean shutdown) and waits until the process is gone. */
  async kill(): Promise<void> {
    const t = this.current;
    if (!t) return;
    signalGroup(t, 'SIGKILL');
    await t.exited;
    this.current = undefined;
  }

  /** The server's log output of the current run. */
  log(): string {
    return this.current?.stderr() ?? '';
  }
}
