/** Policy as its integration specs start it: in a namespace of the spec's, on a database of its own. */
import { streamName } from '@ormuz/event-log';
import { startService, type RunningService } from '@ormuz/service-kit';
import { createTestDatabase, testEnv } from '@ormuz/testing';
import { loadPolicyConfig, policyService } from '../src/index.js';

export interface TestPolicy {
  readonly svc: RunningService;
  /** Deletes the calls stream, stops policy and drops its database. */
  stop(): Promise<void>;
}

/** `env` adds to the test's environment (`HEALTH_PORT: '0'` serves the probes and `/metrics` on a free port). */
export async function startPolicy(namespace: string, env: Record<string, string> = {}): Promise<TestPolicy> {
  const db = await createTestDatabase();
  const svc = await startService(
    policyService(
      loadPolicyConfig({
        NATS_URL: testEnv().natsUrl,
        DATABASE_URL: db.url,
        ORMUZ_NAMESPACE: namespace,
        LOG_LEVEL: 'silent',
        ...env,
      }),
    ),
  );
  return {
    svc,
    async stop() {
      await svc.infra.jsm.streams.delete(streamName(namespace, 'calls'));
      await svc.close();
      await db.drop();
    },
  };
}
