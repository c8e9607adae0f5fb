/**
 * Starts the six services as separate processes (the way they run in production, one process each) and waits for
 * each to answer its health command over NATS.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { NatsConnection } from '@nats-io/transport-node';
import { waitUntilServing, type ServiceHealth } from '@ormuz/service-kit/client';

export type { ServiceHealth };

export const SERVICES = ['policy', 'approvals', 'device-bridge', 'model-loop', 'audit', 'mcp-gateway'] as const;
export type ServiceName = (typeof SERVICES)[number];
/**
 * The services that run projections or reactors and answer `consumers.status`. The MCP gateway runs none (it reads
 * calls through policy), so it never answers that command and is not asked.
 */
export const LOG_CONSUMING_SERVICES: readonly ServiceName[] = SERVICES.filter((s) => s !== 'mcp-gateway');

/** The repository root, found from this file's place in tools/cli/dist. */
export const REPO_ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');

export function serviceEntry(service: ServiceName): string {
  const entry = join(REPO_ROOT, 'services', service, 'dist', 'main.js');
  if (!existsSync(entry))
    throw new Error(`${entry} does not exist. Run \`npm run build\` at the repository root first.`);
  return entry;
}

export interface ServiceProcess {
  readonly name: ServiceName;
  readonly child: ChildProcess;
  readonly logFile: string;
  exited: boolean;
}

/**
 * The variable holding service `name`'s NATS password, `NATS_POLICY_PASSWORD` … `NATS_DEVICE_BRIDGE_PASSWORD`: the
 * NATS server's authorization (infra/nats/authorization.conf) reads the same variables.
 */
export function natsPasswordVariable(name: ServiceName): string {
  return `NATS_${name.toUpperCase().replaceAll('-', '_')}_PASSWORD`;
}

/**
 * The NATS credentials of a service process started from `env`: its own user (named after it) with the password in
 * {@link natsPasswordVariable} when `env` has one. A CLI that itself connects as a user (`NATS_USER`, normally `cli`)
 * must not pass that user on to a service, whose work it is not allowed to do: that is refused here, naming the
 * variable to set. Without either, the service connects without credentials (a server without authorization).
 */
export function serviceNatsEnv(
  name: ServiceName,
  env: NodeJS.ProcessEnv,
): { NATS_USER?: string; NATS_PASSWORD?: string } {
  const variable = natsPasswordVariable(name);
  const password = env[variable];
  if (password) return { NATS_USER: name, NATS_PASSWORD: password };
  if (env.NATS_USER) {
    throw new Error(
      `${name} connects to NATS as its own user, but ${variable} is not set (NATS_USER=${env.NATS_USER} is the CLI's ` +
        `user, which may not do ${name}'s work). Set ${variable} to user ${name}'s password (infra/README.md, NATS users).`,
    );
  }
  return {};
}

/**
 * Spawns one service; its logs go to `logDir/<service>.log`. It connects to NATS as its own user when the
 * environment holds its password (see {@link serviceNatsEnv}, which throws when the CLI has a user and it has none).
 */
export function spawnService(name: ServiceName, env: NodeJS.ProcessEnv, logDir: string): ServiceProcess {
  const childEnv = { ...process.env, ...env };
  Object.assign(childEnv, serviceNatsEnv(name, childEnv));
  mkdirSync(logDir, { recursive: true });
  const logFile = join(logDir, `${name}.log`);
  const log = createWriteStream(logFile, { flags: 'a' });
  const child = spawn(process.execPath, ['--enable-source-maps', serviceEntry(name)], {
    env: childEnv,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout?.pipe(log, { end: false });
  child.stderr?.pipe(log, { end: false });
  const proc: ServiceProcess = { name, child, logFile, exited: false };
  child.once('exit', () => {
    proc.exited = true;
  });
  return proc;
}

/** The last lines of a service's log, for error messages. */
export function tailLog(proc: ServiceProcess, lines = 15): string {
  try {
    return readFileSync(proc.logFile, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}

/**
 * Waits until every service answers `health`, or throws naming the ones that did not (or exited). Returns each
 * service's health, so callers learn the ports services chose for themselves.
 */
export async function waitHealthy(
  nc: NatsConnection,
  namespace: string,
  procs: readonly ServiceProcess[],
  timeoutMs = 30_000,
): Promise<Record<string, ServiceHealth>> {
  const answers = await Promise.all(
    procs.map(async (proc) => {
      try {
        return [
          proc.name,
          await waitUntilServing(nc, namespace, proc.name, { timeoutMs, stillStarting: () => !proc.exited }),
        ] as const;
      } catch {
        if (proc.exited) throw new Error(`${proc.name} exited during start-up. Its last log lines:\n${tailLog(proc)}`);
        // The log's last lines say which phase of its start it still waits on (`start: still waiting on …`).
        throw new Error(
          `${proc.name} did not become healthy within ${timeoutMs} ms. Log: ${proc.logFile}; its last lines:\n` +
            tailLog(proc),
        );
      }
    }),
  );
  return Object.fromEntries(answers);
}

/** Sends SIGTERM and waits (bounded) for every process to exit; SIGKILL after the bound. */
export async function stopAll(procs: readonly ServiceProcess[], timeoutMs = 10_000): Promise<void> {
  await Promise.all(
    procs.map(
      (p) =>
        new Promise<void>((resolve) => {
          if (p.exited) return resolve();
          const timer = setTimeout(() => p.child.kill('SIGKILL'), timeoutMs);
          p.child.once('exit', () => {
            clearTimeout(timer);
            resolve();
          });
          p.child.kill('SIGTERM');
        }),
    ),
  );
}
