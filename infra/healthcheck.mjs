// Container healthcheck: exits 0 when the named service is ready, 1 otherwise. Usage: node infra/healthcheck.mjs
// <service>.
//
// With HEALTH_PORT set (compose sets it), it asks the service's own readiness probe, GET http://127.0.0.1:<port>/readyz
// (NATS, the streams, Postgres and the log consumers' lag; libs/service-kit/src/readiness.ts), and prints the failed
// checks. Without it, it sends the service's `health` command over NATS, reading NATS_URL, NATS_USER, NATS_PASSWORD and
// ORMUZ_NAMESPACE like the services do; the subject layout (`<namespace>.cmd.<service>.health`) is the one in
// libs/contracts/src/subjects.ts. It then runs as the service's own NATS user, whose permissions allow publishing its
// own `health` command and reading replies under `_INBOX.<user>` only (infra/nats/authorization.conf; the inbox prefix
// is `inboxPrefixOf` in libs/event-log/src/connection.ts).
/* global fetch, AbortSignal */
import { connect } from '@nats-io/transport-node';

const service = process.argv[2];
if (!service) {
  process.stderr.write('usage: node infra/healthcheck.mjs <service>\n');
  process.exit(2);
}

async function overHttp(port) {
  const res = await fetch(`http://127.0.0.1:${port}/readyz`, { signal: AbortSignal.timeout(4000) });
  const body = await res.json();
  if (res.status !== 200) {
    const failed = (body.checks ?? []).filter((c) => !c.ok).map((c) => `${c.name}: ${c.error}`);
    throw new Error(`not ready (${failed.join('; ') || res.status})`);
  }
}

async function overNats() {
  const namespace = process.env.ORMUZ_NAMESPACE || 'ormuz';
  const servers = (process.env.NATS_URL || 'nats://127.0.0.1:4222').split(',');
  const user = process.env.NATS_USER || undefined;
  const credentials = user ? { user, pass: process.env.NATS_PASSWORD ?? '', inboxPrefix: `_INBOX.${user}` } : {};
  let nc;
  try {
    nc = await connect({
      servers,
      name: `ormuz-healthcheck-${service}`,
      timeout: 2000,
      reconnect: false,
      ...credentials,
    });
    const reply = await nc.request(`${namespace}.cmd.${service}.health`, '{}', { timeout: 2000 });
    const body = JSON.parse(reply.string());
    if (body.ok !== true) throw new Error(`answered ${reply.string()}`);
  } finally {
    await nc?.close().catch(() => undefined);
  }
}

try {
  const port = process.env.HEALTH_PORT;
  await (port ? overHttp(port) : overNats());
  process.exitCode = 0;
} catch (err) {
  process.stderr.write(`${service} is not healthy: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exitCode = 1;
}
