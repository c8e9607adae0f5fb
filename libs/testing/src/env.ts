/**
 * Where tests find NATS and Postgres. The jest global setup may start containers and export their URLs through
 * `NATS_URL` / `DATABASE_URL` before any test file loads; otherwise the variables (or the local defaults) are used.
 */

/** Connection URLs for the servers integration and end-to-end tests run against. */
export interface TestEnv {
  /** A NATS server with JetStream enabled. Env `NATS_URL`, default {@link DEFAULT_NATS_URL}. */
  readonly natsUrl: string;
  /**
   * A Postgres database the test user may create databases from (see `createTestDatabase`). Env `DATABASE_URL`,
   * default {@link DEFAULT_DATABASE_URL}.
   */
  readonly databaseUrl: string;
}

/** NATS on the loopback interface, as the development machines and `.ci/run` provide it. */
export const DEFAULT_NATS_URL = 'nats://127.0.0.1:4222';
/** Postgres on the loopback interface with trust auth and a `test` database. */
export const DEFAULT_DATABASE_URL = 'postgres://postgres@127.0.0.1:5432/test';

/** Reads the test servers' URLs from `env` (default `process.env`); an empty variable counts as unset. */
export function testEnv(env: Readonly<Record<string, string | undefined>> = process.env): TestEnv {
  return {
    natsUrl: env.NATS_URL || DEFAULT_NATS_URL,
    databaseUrl: env.DATABASE_URL || DEFAULT_DATABASE_URL,
  };
}
