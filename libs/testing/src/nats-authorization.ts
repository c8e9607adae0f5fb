/**
 * A NATS server of the test's own under the authorization the platform ships (the shared test server runs without
 * one): for the tests that each service, and the CLI, can do their work as their own NATS users and nothing more.
 */
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { startNatsServer, type NatsServerHandle } from '@ormuz/event-log';

/** The shipped authorization, `infra/nats/authorization.conf` of this repository (users and their permissions). */
export const SHIPPED_NATS_AUTHORIZATION = join(
  import.meta.dirname,
  '..',
  '..',
  '..',
  'infra',
  'nats',
  'authorization.conf',
);

/** The variable the authorization reads `user`'s password from: `NATS_DEVICE_BRIDGE_PASSWORD` for `device-bridge`. */
export function natsPasswordVariable(user: string): string {
  return `NATS_${user.toUpperCase().replaceAll('-', '_')}_PASSWORD`;
}

export interface AuthorizedNatsServer<U extends string> {
  readonly server: NatsServerHandle;
  /** A fresh password for each user asked for. Users not asked for exist but cannot connect. */
  readonly passwords: Readonly<Record<U, string>>;
}

/**
 * Starts a `nats-server` on a free loopback port under {@link SHIPPED_NATS_AUTHORIZATION}, with a fresh password for
 * each of `users` (`policy`, …, `cli`). Stop it with `server.stop()` in `afterAll`.
 *
 * @throws when there is no `nats-server` binary (see `findNatsServer`) or the server does not start.
 */
export async function startAuthorizedNatsServer<U extends string>(
  users: readonly U[],
): Promise<AuthorizedNatsServer<U>> {
  // A letter first: nats-server reads the variable as a configuration value, and `5e3…` is not a string there.
  const passwords = Object.fromEntries(users.map((user) => [user, `p${randomBytes(12).toString('hex')}`])) as Record<
    U,
    string
  >;
  const server = await startNatsServer({
    include: [SHIPPED_NATS_AUTHORIZATION],
    env: Object.fromEntries(users.map((user) => [natsPasswordVariable(user), passwords[user]])),
  });
  return { server, passwords };
}
