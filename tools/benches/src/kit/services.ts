import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { NatsConnection } from '@nats-io/transport-node';
import { waitUntilServing, type ServiceHealth } from '@ormuz/service-kit';

/** The repository's root, from `tools/benches/dist/kit`. */
const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', '..');

/** A service of the platform running as a process of its own. */
export interface ServiceProcess {
  readonly name: string;
  readonly child: ChildProcess;
  /** Resolves when the process has exited, with its code or signal. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Its health once it serves. */
  readonly health: ServiceHealth;
}

/**
 * Starts `services/<name>/dist/main.js` with `env`, its output appended to `<logDir>/<name>.log`, and resolves once
 * it serves in `namespace` (`waitUntilServing`); when it does not, kills it and throws with the log's last lines.
 */
export async function startServiceProcess(
  nc: NatsConnection,
  namespace: string,
  name: string,
  env: NodeJS.ProcessEnv,
  logDir: string,
  timeoutMs = 120_000,
): Promise<ServiceProcess> {
  const logFile = join(logDir, `${name}.log`);
  const log = openSync(logFile, 'a');
  const child = spawn(process.execPath, [join(ROOT, 'services', name, 'dist', 'main.js')], {
    env,
    stdio: ['ignore', log, log],
  });
  closeSync(log);
  let gone = false;
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => {
      gone = true;
      resolve({ code, signal });
    }),
  );
  try {
    const health = await waitUntilServing(nc, namespace, name, { timeoutMs, stillStarting: () => !gone });
    return { name, child, exited, health };
  } catch (err) {
    child.kill('SIGKILL');
    const tail = readFileSync(logFile, 'utf8').split('\n').slice(-20).join('\n');
    throw new Error(`${name} did not start: ${(err as Error).message}\n${tail}`);
  }
}

/** A TCP port free on the loopback interface right now. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}
