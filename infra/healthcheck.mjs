// Container healthcheck: exits 0 when the named service answers its `health` command over NATS, 1 otherwise.
// Usage: node infra/healthcheck.mjs <service>. Reads NATS_URL and ORMUZ_NAMESPACE like the services do; the subject
// layout (`<namespace>.cmd.<service>.health`) is the one in libs/contracts/src/subjects.ts.
import { connect } from '@nats-io/transport-node';

const service = process.argv[2];
if (!service) {
  process.stderr.write('usage: node infra/healthcheck.mjs <service>\n');
  process.exit(2);
}
const namespace = process.env.ORMUZ_NAMESPACE || 'ormuz';
const servers = (process.env.NATS_URL || 'nats://127.0.0.1:4222').split(',');

let nc;
try {
  nc = await connect({ servers, name: `ormuz-healthcheck-${service}`, timeout: 2000, reconnect: false });
  const reply = await nc.request(`${namespace}.cmd.${service}.health`, '{}', { timeout: 2000 });
  const body = JSON.parse(reply.string());
  if (body.ok !== true) throw new Error(`answered ${reply.string()}`);
  process.exitCode = 0;
} catch (err) {
  process.stderr.write(`${service} is not healthy: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exitCode = 1;
} finally {
  await nc?.close().catch(() => undefined);
}
