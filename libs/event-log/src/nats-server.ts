/**
 * A NATS server of a process's own: `nats-server` started with given configuration files on a free loopback port,
 * with JetStream. The demo runs one under the shipped authorization (so that `npm start` needs no NATS of the
 * developer's, and its services connect as their own users), and tests of the authorization do the same, since the
 * shared development server runs without it. It lives beside {@link connectNats} because it is NATS process
 * management that runtime tools use, not a test helper (`@ormuz/testing` re-exports it).
 *
 * The JetStream store is temporary (removed on stop) unless `storeDir` names one to keep. The server is killed
 * should the starting process exit first.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  accessSync,
  appendFileSync,
  constants,
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { connect as tcpConnect, createServer } from 'node:net';
import { homedir, tmpdir } from 'node:os';
import { basename, delimiter, dirname, join } from 'node:path';

/** Where Debian's `nats-server` package puts the binary (not on a non-root user's PATH). */
export const DEBIAN_NATS_SERVER = '/usr/sbin/nats-server';

export interface NatsServerOptions {
  /**
   * Configuration files the server includes, e.g. `infra/nats/authorization.conf`. Each is copied beside the
   * generated main configuration and included by name (nats-server resolves includes relative to the including
   * file), so a file must not include others itself.
   */
  readonly include?: readonly string[];
  /**
   * The server process's whole environment: what the configuration's `$VARIABLE` references read (passwords). Nothing
   * of the caller's own environment is passed on, so a reference the caller did not set fails the start, with one
   * exception: a user's password variable (`NATS_<USER>_PASSWORD`) an included file names and `env` does not gets a
   * random value nobody is told. That user (a service the caller does not run, such as one added to the shipped
   * authorization after the caller was written) then exists but cannot connect, and the server still starts.
   */
  readonly env?: Readonly<Record<string, string>>;
  /** The binary. Default: {@link findNatsServer}. */
  readonly binary?: string;
  /** How long the server may take to answer, in milliseconds. Default 15 000. */
  readonly timeoutMs?: number;
  /**
   * A JetStream store to keep: created if missing, kept on stop, used again by the next server started on it (the
   * demo's streams live as long as its database, whose projection checkpoints point into them). Default: a temporary
   * store, removed on stop. While a server runs on it the directory holds `server.pid`, and a second start on it is
   * refused: nats-server 2.9 does not stop two servers from writing one store, which corrupts it.
   */
  readonly storeDir?: string;
  /**
   * The port to listen on, e.g. a server's own port to start it again where its clients reconnect (a chaos run's
   * restart). Default: a free one.
   */
  readonly port?: number;
  /** Where to append everything the server prints as well (created with its directory); the demo's log beside its services'. */
  readonly logFile?: string;
  /**
   * Serve NATS's HTTP monitoring (/varz, /connz, /jsz) on another free loopback port, as {@link NatsServerHandle.monitorUrl}:
   * who is connected as which user, and where each stream stands.
   */
  readonly monitor?: boolean;
}

export interface NatsServerHandle {
  /** `nats://127.0.0.1:<port>`. */
  readonly url: string;
  readonly port: number;
  /** The server's temporary directory: its generated configuration (and the JetStream store, unless `storeDir`). */
  readonly dir: string;
  /** The directory JetStream keeps its store in: `storeDir`, or inside {@link dir}. */
  readonly storeDir: string;
  /** `http://127.0.0.1:<port>` of the monitoring endpoints, with the `monitor` option. */
  readonly monitorUrl: string | undefined;
  /** The server's process id. */
  readonly pid: number;
  /** What the server printed so far (its log; the last 64 KiB), for error messages. */
  log(): string;
  /**
   * Stops the server (SIGTERM, SIGKILL if it has not exited within 10 s) and removes its temporary directory; a kept
   * store stays, unlocked.
   */
  stop(): Promise<void>;
}

/** Raised when a kept store is in use by another running server. */
export class NatsStoreInUseError extends Error {
  constructor(
    readonly storeDir: string,
    readonly pid: number,
  ) {
    super(
      `The NATS store ${storeDir} is in use by nats-server process ${pid} (another demo?). Stop that first; ` +
        `if no demo is running, that server was left behind: \`kill ${pid}\`.`,
    );
    this.name = 'NatsStoreInUseError';
  }
}

/** The `nats-server` binary to run, or undefined when there is none. */
export function natsServerBinary(env: Readonly<Record<string, string | undefined>> = process.env): string | undefined {
  const candidates = [
    env.NATS_SERVER_BIN,
    ...(env.PATH ?? '')
      .split(delimiter)
      .filter(Boolean)
      .map((dir) => join(dir, 'nats-server')),
    DEBIAN_NATS_SERVER,
  ].filter((c): c is string => Boolean(c));
  for (const candidate of candidates) {
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // Not there, or not executable: the next one.
    }
  }
  return undefined;
}

/** The `nats-server` binary to run (`NATS_SERVER_BIN`, else on PATH, else Debian's); throws naming how to install it. */
export function findNatsServer(env: Readonly<Record<string, string | undefined>> = process.env): string {
  const found = natsServerBinary(env);
  if (found) return found;
  throw new Error(
    'No nats-server binary found (looked at NATS_SERVER_BIN, nats-server on PATH and /usr/sbin/nats-server). ' +
      'Install it (`apt-get install nats-server`; .ci/run does) or set NATS_SERVER_BIN.',
  );
}

/** Where `tools/fetch-nats-server.sh` (run by .ci/run) puts Debian trixie's nats-server 2.10. */
export function fetchedNatsServer(env: Readonly<Record<string, string | undefined>> = process.env): string {
  return join(env.ORMUZ_CLUSTER_NATS_DIR ?? join(homedir(), '.cache', 'ormuz', 'nats-server-2.10'), 'nats-server');
}

/**
 * The binary a replicated cluster runs: `ORMUZ_CLUSTER_NATS_SERVER`, else the fetched 2.10 when it is there, else the
 * machine's ({@link findNatsServer}). Servers before 2.9.21 (Debian bookworm's is 2.9.10) can accept two appends on one
 * expected sequence at replicas 3 (nats-server#4320: the check was not part of the replicated write); a single server
 * has no such race. See docs/decisions/0032-the-log-on-a-nats-cluster.md.
 */
export function clusterNatsServer(env: Readonly<Record<string, string | undefined>> = process.env): string {
  for (const candidate of [env.ORMUZ_CLUSTER_NATS_SERVER, fetchedNatsServer(env)]) {
    if (!candidate) continue;
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // Not there: the next one.
    }
  }
  return findNatsServer(env);
}

const LOG_LIMIT = 64 * 1024;
/** Attempts when a free port was taken by another process between choosing it and the server binding it. */
const PORT_ATTEMPTS = 3;
const PID_FILE = 'server.pid';

/** Starts a server and resolves once it accepts clients. Throws with the server's output when it does not start. */
export async function startNatsServer(opts: NatsServerOptions = {}): Promise<NatsServerHandle> {
  const binary = opts.binary ?? findNatsServer();
  for (let attempt = 1; ; attempt++) {
    const port = opts.port ?? (await freePort());
    const monitorPort = opts.monitor ? await freePort() : undefined;
    try {
      return await startOn(binary, port, monitorPort, opts);
    } catch (err) {
      if (!(err instanceof PortTakenError) || attempt >= PORT_ATTEMPTS || opts.port !== undefined) throw err;
    }
  }
}

/** A random password for each `$NATS_<USER>_PASSWORD` the files name: users no one may connect as (see `env`). */
export function unheldPasswords(files: readonly string[]): Record<string, string> {
  const passwords: Record<string, string> = {};
  for (const file of files) {
    for (const [, name] of readFileSync(file, 'utf8').matchAll(/\$(NATS_[A-Z0-9_]+_PASSWORD)\b/g)) {
      passwords[name!] = `p${randomBytes(24).toString('hex')}`;
    }
  }
  return passwords;
}

/**
 * Writes `nats-server.conf` into `dir`: `lines`, then an include of each file of `include`, copied beside it and
 * included by name (nats-server resolves includes relative to the including file). Returns its path.
 */
export function writeServerConfig(dir: string, lines: readonly string[], include: readonly string[]): string {
  const all = [...lines];
  for (const file of include) {
    const name = basename(file);
    copyFileSync(file, join(dir, name));
    all.push(`include ${JSON.stringify(`./${name}`)}`);
  }
  const config = join(dir, 'nats-server.conf');
  writeFileSync(config, `${all.join('\n')}\n`);
  return config;
}

async function startOn(
  binary: string,
  port: number,
  monitorPort: number | undefined,
  opts: NatsServerOptions,
): Promise<NatsServerHandle> {
  const dir = mkdtempSync(join(tmpdir(), 'ormuz-nats-'));
  const storeDir = opts.storeDir ?? join(dir, 'jetstream');
  const lines = [
    '# Generated by @ormuz/event-log startNatsServer.',
    `listen: ${JSON.stringify(`127.0.0.1:${port}`)}`,
    ...(monitorPort ? [`http: ${JSON.stringify(`127.0.0.1:${monitorPort}`)}`] : []),
    `jetstream { store_dir: ${JSON.stringify(storeDir)} }`,
  ];
  let config: string;
  let unlock: ReturnType<typeof lockStore> | undefined;
  try {
    config = writeServerConfig(dir, lines, opts.include ?? []);
    if (opts.logFile) mkdirSync(dirname(opts.logFile), { recursive: true });
    if (opts.storeDir) unlock = lockStore(opts.storeDir);
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }

  const server = spawnNatsServer(binary, config, {
    env: { ...unheldPasswords(opts.include ?? []), ...opts.env },
    logFile: opts.logFile,
  });
  unlock?.hold(server.pid);
  let stopping: Promise<void> | undefined;
  // Safe to call twice, and after the server exited on its own.
  const stop = () =>
    (stopping ??= (async () => {
      await server.terminate();
      unlock?.release();
      rmSync(dir, { recursive: true, force: true });
    })());

  try {
    await server.answered(port, opts.timeoutMs ?? 15_000);
  } catch (err) {
    await stop();
    throw err;
  }
  return {
    url: `nats://127.0.0.1:${port}`,
    port,
    dir,
    storeDir,
    monitorUrl: monitorPort ? `http://127.0.0.1:${monitorPort}` : undefined,
    pid: server.pid,
    log: server.log,
    stop,
  };
}

/** One running `nats-server` process: what it printed, and how to wait for it or end it. */
export interface NatsServerProcess {
  readonly pid: number;
  /** What the server printed so far (the last 64 KiB). */
  log(): string;
  /** True once the process has exited. */
  exited(): boolean;
  /**
   * Resolves once the server greets a client on `port`. A server that exits, or does not answer within `timeoutMs`,
   * is stopped and the error carries its output ({@link PortTakenError} when its port was taken).
   */
  answered(port: number, timeoutMs: number): Promise<void>;
  /**
   * Ends the process and resolves once it has exited: SIGTERM, then SIGKILL if it has not exited within 10 s, or
   * SIGKILL at once (a crash, for the chaos tests). Safe to call after it exited.
   */
  terminate(signal?: 'SIGTERM' | 'SIGKILL'): Promise<void>;
}

/** Raised when a server could not listen on a port chosen for it, taken meanwhile by another process. */
export class PortTakenError extends Error {}

/**
 * Runs `nats-server -c <config>` with exactly `env` as its environment, appending its output to `logFile` as well. The
 * server is killed should the starting process exit first.
 */
export function spawnNatsServer(
  binary: string,
  config: string,
  opts: { readonly env?: Readonly<Record<string, string>>; readonly logFile?: string | undefined } = {},
): NatsServerProcess {
  let output = '';
  const child: ChildProcess = spawn(binary, ['-c', config], {
    env: { ...opts.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const collect = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-LOG_LIMIT);
    if (opts.logFile) appendFileSync(opts.logFile, chunk);
  };
  child.stdout?.on('data', collect);
  child.stderr?.on('data', collect);
  // Never outlive the starting process, whatever its own shutdown did.
  const killOnExit = () => child.kill('SIGKILL');
  process.once('exit', killOnExit);
  // 'close', not 'exit': by then everything the server printed has been collected.
  const closed = new Promise<number | null>((resolve) => {
    child.once('close', (code) => resolve(code));
    child.once('error', (err) => {
      output += `${err.message}\n`;
      resolve(null);
    });
  });
  let exitCode: number | null | undefined;
  void closed.then((code) => {
    exitCode = code;
    process.off('exit', killOnExit);
  });

  const terminate = async (signal: 'SIGTERM' | 'SIGKILL' = 'SIGTERM') => {
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    child.kill(signal);
    await closed;
    clearTimeout(timer);
  };
  return {
    pid: child.pid ?? -1,
    log: () => output,
    exited: () => exitCode !== undefined,
    terminate,
    async answered(port, timeoutMs) {
      try {
        // A server that exits ends the wait at once (and is reported below) instead of being polled until the timeout.
        const deadline = Date.now() + timeoutMs;
        while (exitCode === undefined && !(await answers(port))) {
          if (Date.now() > deadline)
            throw new Error(`nats-server did not answer on 127.0.0.1:${port} within ${timeoutMs} ms.`);
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
        if (exitCode !== undefined) {
          throw new Error(`nats-server exited (code ${exitCode}) before it answered on 127.0.0.1:${port}.`);
        }
      } catch (err) {
        await terminate();
        const log = output.trim();
        if (/address already in use/i.test(log)) throw new PortTakenError(log);
        throw new Error(`${(err as Error).message}\nIts output:\n${log || '(none)'}`, { cause: err });
      }
    },
  };
}

/**
 * Claims a kept store for one server: `server.pid` is created exclusively (holding this process's id until the
 * server's is known). A file whose process is gone is left from a server that was killed, and is taken over.
 */
function lockStore(storeDir: string): { hold(pid: number | undefined): void; release(): void } {
  mkdirSync(storeDir, { recursive: true });
  const file = join(storeDir, PID_FILE);
  for (;;) {
    try {
      writeFileSync(file, `${process.pid}\n`, { flag: 'wx' });
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    const holder = Number(readFileSync(file, 'utf8').trim());
    if (Number.isInteger(holder) && holder > 0 && holds(holder)) throw new NatsStoreInUseError(storeDir, holder);
    rmSync(file, { force: true });
  }
  return {
    hold: (pid) => {
      if (pid !== undefined) writeFileSync(file, `${pid}\n`);
    },
    release: () => rmSync(file, { force: true }),
  };
}

/**
 * True when process `pid` may still be using the store: it runs, and where /proc tells what it is, it is a
 * nats-server (or the node process that is starting one). A pid the system gave to another program since is not.
 */
function holds(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (err) {
    // EPERM: it exists, under another user.
    if ((err as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  let command: string;
  try {
    command = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
  } catch {
    return true;
  }
  return /nats-server|node/.test(command);
}

/**
 * A TCP port that was free on 127.0.0.1 a moment ago (the OS picks it). nats-server cannot listen on port 0 and
 * report the port, so one is chosen here and a start that finds it taken is retried on another.
 */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', reject);
    server.listen({ host: '127.0.0.1', port: 0, exclusive: true }, () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : undefined;
      server.close(() => (port ? resolve(port) : reject(new Error('No port was assigned on 127.0.0.1.'))));
    });
  });
}

/** True when a NATS server greets a new connection on `port` with its INFO line. */
function answers(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = tcpConnect({ host: '127.0.0.1', port });
    let seen = '';
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(1000, () => done(false));
    socket.on('data', (chunk) => {
      seen += chunk.toString();
      if (seen.length >= 4) done(seen.startsWith('INFO'));
    });
    socket.on('error', () => done(false));
    socket.on('close', () => done(seen.startsWith('INFO')));
  });
}
