/**
 * jest `globalSetup` for the integration and e2e projects: the test servers for one run.
 *
 * Containers start only when asked (`ORMUZ_TESTCONTAINERS=1`) or when neither `NATS_URL` nor `DATABASE_URL` is set
 * and a Docker engine answers; `ORMUZ_TESTCONTAINERS=0` never starts them. Otherwise tests use the URLs from the
 * environment or the local defaults (see `testEnv`). Started containers' URLs are exported through `process.env`,
 * which jest's workers inherit.
 *
 * Both projects share one pair of containers: the state lives on `globalThis` with a reference count (jest loads each
 * project's setup as its own module), and global-teardown.ts stops them after the last project. jest loads this file
 * as CommonJS outside the module mapper, so it imports nothing relative.
 */
import { request } from 'node:http';

/** NATS with JetStream, the version production runs. */
export const NATS_IMAGE = 'nats:2.12';
/** Postgres; `fsync=off` because test data is disposable. */
export const POSTGRES_IMAGE = 'postgres:17';

type Env = Record<string, string | undefined>;
interface TestServers {
  refs: number;
  stop: () => Promise<void>;
}
const state = globalThis as typeof globalThis & { __ormuzTestServers?: TestServers };

export default async function globalSetup(): Promise<void> {
  await acquireTestServers(process.env);
}

/** Starts the containers if this run should have them; a second call only adds a reference. */
export async function acquireTestServers(env: Env): Promise<void> {
  if (state.__ormuzTestServers) {
    state.__ormuzTestServers.refs++;
    return;
  }
  const mode = env.ORMUZ_TESTCONTAINERS;
  const wanted = mode === '1' || (mode !== '0' && !env.NATS_URL && !env.DATABASE_URL && (await dockerAnswers(env)));
  if (!wanted) {
    state.__ormuzTestServers = { refs: 1, stop: async () => undefined };
    return;
  }
  if (!(await dockerAnswers(env, 3_000))) {
    throw new Error(
      'ORMUZ_TESTCONTAINERS=1 but no Docker engine answered (DOCKER_HOST or /var/run/docker.sock). Start Docker, or ' +
        'unset ORMUZ_TESTCONTAINERS to run against NATS_URL / DATABASE_URL (default: the local servers).',
    );
  }
  const { GenericContainer, Wait } = await import('testcontainers');
  const [nats, postgres] = await Promise.all([
    new GenericContainer(NATS_IMAGE)
      .withCommand(['-js'])
      .withExposedPorts(4222)
      .withWaitStrategy(Wait.forLogMessage(/Server is ready/))
      .start(),
    new GenericContainer(POSTGRES_IMAGE)
      .withCommand(['-c', 'fsync=off'])
      .withEnvironment({ POSTGRES_HOST_AUTH_METHOD: 'trust', POSTGRES_DB: 'test' })
      .withTmpFs({ '/var/lib/postgresql/data': 'rw' })
      .withExposedPorts(5432)
      .withWaitStrategy(Wait.forLogMessage(/database system is ready to accept connections/, 2))
      .start(),
  ]);
  env.NATS_URL = `nats://${nats.getHost()}:${nats.getMappedPort(4222)}`;
  env.DATABASE_URL = `postgres://postgres@${postgres.getHost()}:${postgres.getMappedPort(5432)}/test`;
  console.log(`\ntest servers: ${NATS_IMAGE} at ${env.NATS_URL}, ${POSTGRES_IMAGE} at ${env.DATABASE_URL}`);
  state.__ormuzTestServers = {
    refs: 1,
    stop: async () => {
      await Promise.all([nats.stop(), postgres.stop()]);
    },
  };
}

/**
 * True when a Docker engine answers `GET /_ping` within `timeoutMs`: on `DOCKER_HOST` when it is a `unix://` or
 * `tcp://` address, otherwise on `/var/run/docker.sock`. Never throws.
 */
export function dockerAnswers(env: Env, timeoutMs = 1_000): Promise<boolean> {
  const host = env.DOCKER_HOST;
  let target: { socketPath: string } | { host: string; port: number };
  if (host?.startsWith('tcp://')) {
    const url = new URL(host.replace(/^tcp:/, 'http:'));
    target = { host: url.hostname, port: Number(url.port || 2375) };
  } else {
    target = { socketPath: host?.startsWith('unix://') ? host.slice('unix://'.length) : '/var/run/docker.sock' };
  }
  return new Promise((resolve) => {
    const req = request({ ...target, path: '/_ping', method: 'GET', timeout: timeoutMs }, (res) => {
      res.resume();
      resolve(res.statusCode === 200);
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', () => resolve(false));
    req.end();
  });
}
