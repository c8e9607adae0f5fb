// A process that runs consumers of the log until it is killed: the crash tests start it again and again, and kill it
// with SIGKILL from outside or at a chosen point inside (`crash`: after the `after`-th call at `point`). It runs the
// compiled packages (`npm run build`), as a service process does.
//
// ORMUZ_CRASH_CHILD is JSON: { natsUrl, databaseUrl, consumers: [{ module, export, args, kind }], crash?, batchSize? }
// where `module` is a file URL whose export builds a projection (kind 'projection') or a reaction (kind 'reaction')
// from `args` (a reaction's builder also gets { js, db }).
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { connectNats, ProjectionRunner, ReactionRunner } from '@ormuz/event-log';
import { openDatabase } from '@ormuz/postgres';

const spec = JSON.parse(process.env.ORMUZ_CRASH_CHILD ?? '{}');
let calls = 0;
const crashPoint = (point) => {
  if (spec.crash && point === spec.crash.point && ++calls >= spec.crash.after) process.kill(process.pid, 'SIGKILL');
};

const nc = await connectNats({ url: spec.natsUrl, name: 'crash-child' });
const js = jetstream(nc);
const jsm = await jetstreamManager(nc);
const db = await openDatabase({ url: spec.databaseUrl });
const logger = {
  info() {},
  warn(obj, msg) {
    process.stderr.write(`${msg} ${JSON.stringify(obj)}\n`);
  },
  error(obj, msg) {
    process.stderr.write(`${msg} ${JSON.stringify(obj)}\n`);
  },
};
const opts = { logger, crashPoint, batchSize: spec.batchSize ?? 16 };
for (const c of spec.consumers) {
  const build = (await import(c.module))[c.export];
  if (c.kind === 'reaction') {
    await new ReactionRunner(js, jsm, db, build(...c.args, { js, db }), opts).start();
  } else {
    await new ProjectionRunner(js, jsm, db, build(...c.args), opts).start();
  }
}
process.stdout.write('ready\n');
