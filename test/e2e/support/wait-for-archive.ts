import type { NatsConnection } from '@nats-io/transport-node';
import { callRpc } from '@ormuz/service-kit';
import { adminFor, waitFor } from '@ormuz/testing';

/**
 * Waits until audit's projections (`only: 'archives'`: its archive projections) have read their streams to the end,
 * none parked: the archive then holds the history appended before the call.
 */
export async function waitForArchive(
  nc: NatsConnection,
  ns: string,
  opts: { readonly only?: 'archives'; readonly timeoutMs?: number; readonly intervalMs?: number } = {},
): Promise<void> {
  await waitFor(
    async () => {
      const body = {};
      const { projections } = await callRpc(nc, ns, 'audit.projections', body, { credential: await adminFor(body) });
      const watched =
        opts.only === 'archives' ? projections.filter((p) => p.projection.includes('archive')) : projections;
      return watched.length > 0 && watched.every((p) => p.checkpoint >= p.stream_last_seq && p.parked === 0);
    },
    { timeoutMs: opts.timeoutMs ?? 60_000, intervalMs: opts.intervalMs, message: 'the archive to hold the history' },
  );
}
