/**
 * Several processes of each service for the end-to-end tests (decision 0033): `ORMUZ_E2E_REPLICAS=2 npm test --
 * test/e2e/<file>` runs a scenario with two replicas of every service, the way a deployment runs them. Commands go to
 * any replica (NATS queue groups); one replica of each service runs its consumers of the log (a Postgres lease).
 */
import { join } from 'node:path';
import type { NatsConnection } from '@nats-io/transport-node';
import { commandSubject } from '@ormuz/contracts';
import { waitFor } from '@ormuz/testing';
import {
  SERVICES,
  spawnService,
  waitHealthy,
  type ServiceHealth,
  type ServiceName,
  type ServiceProcess,
} from '../../../tools/cli/src/services.js';

/** How many processes of each service the e2e tests start: `ORMUZ_E2E_REPLICAS`, default 1. */
export function e2eReplicas(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env.ORMUZ_E2E_REPLICAS;
  if (raw === undefined || raw === '') return 1;
  const n = Number(raw);
  if (!Number.isSafeInteger(n) || n < 1) throw new Error(`ORMUZ_E2E_REPLICAS=${raw} is not a whole number ≥ 1.`);
  return n;
}

/**
 * Spawns `replicas` processes of `service`. The first keeps the ports `env` gives; the others pick free ports of
 * their own (devices and HTTP clients of a test reach the first) and log to `<logDir>/replica-<n>/`.
 */
export function spawnReplicas(
  service: ServiceName,
  env: NodeJS.ProcessEnv,
  logDir: string,
  replicas = e2eReplicas(),
): ServiceProcess[] {
  return Array.from({ length: replicas }, (_, i) =>
    i === 0
      ? spawnService(service, env, logDir)
      : spawnService(
          service,
          { ...env, APPROVALS_PORT: '0', DEVICE_BRIDGE_PORT: '0', MCP_GATEWAY_PORT: '0' },
          join(logDir, `replica-${i + 1}`),
        ),
  );
}

/** {@link spawnReplicas} of every service. */
export function spawnPlatformServices(
  env: NodeJS.ProcessEnv,
  logDir: string,
  replicas = e2eReplicas(),
): ServiceProcess[] {
  return SERVICES.flatMap((s) => spawnReplicas(s, env, logDir, replicas));
}

/**
 * Waits until every process answers `health` itself (`waitHealthy` returns at the first answer of a service, which
 * any of its replicas may give). Returns each service's health, as the first replica answers it.
 */
export async function waitEveryReplica(
  nc: NatsConnection,
  namespace: string,
  procs: readonly ServiceProcess[],
  timeoutMs = 120_000,
): Promise<Record<string, ServiceHealth>> {
  const health = await waitHealthy(nc, namespace, procs, timeoutMs);
  const firsts = new Map<string, ServiceHealth>();
  for (const proc of procs) {
    const pid = proc.child.pid;
    await waitFor(
      async () => {
        if (proc.exited) throw new Error(`${proc.name} (pid ${pid}) exited during start-up; its log: ${proc.logFile}`);
        const answers = await nc.requestMany(commandSubject(namespace, proc.name, 'health'), '', {
          strategy: 'timer',
          maxWait: 300,
        });
        for await (const m of answers) {
          const data = m.json<{ ok: boolean; data?: ServiceHealth }>().data;
          if (!data || data.pid !== pid) continue;
          if (!firsts.has(proc.name)) firsts.set(proc.name, data);
          return true;
        }
        return false;
      },
      { timeoutMs, intervalMs: 50, message: `${proc.name} (pid ${pid}) to answer health` },
    );
  }
  return { ...health, ...Object.fromEntries(firsts) };
}
