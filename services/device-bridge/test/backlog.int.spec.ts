/**
 * Flow control against a real backlog: 5,000 calls authorized for a device while it is offline, then the device
 * connects. The bridge sends no more than the device's window at a time, so the device drains the backlog at its
 * own pace on one connection: no 4005 close, no reconnect, no outcome_unknown, and every call runs exactly once.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { jest } from '@jest/globals';
import { sql } from 'kysely';
import { ToolCallEventType } from '@ormuz/contracts';
import { runSimulatedDevice, type SimulatedDeviceHandle } from '@ormuz/device-sdk';
import { replay, streamName } from '@ormuz/event-log';
import { waitFor } from '@ormuz/testing';
import { DEVICE_BRIDGE_SCHEMA, DeviceLinkHost } from '../src/index.js';
import { authorizeCall, startBridge, type BridgeUnderTest } from './bridge.fixture.js';

jest.setTimeout(120_000);

/**
 * The journal fsyncs every record, and the device runs one execution at a time: on a disk that takes milliseconds per
 * fsync, the drain would measure the disk. A memory-backed directory (where there is one) keeps the test about the
 * protocol; the journal's durability has its own tests.
 */
function journalDir(): string {
  const base = existsSync('/dev/shm') ? '/dev/shm' : tmpdir();
  return mkdtempSync(join(base, 'ormuz-backlog-journal-'));
}

const TENANT = 'acme';
const DEVICE = 'phone-1';
const CALLS = 5_000;
const WINDOW = 64;

describe('a backlog of 5,000 calls for an offline device', () => {
  let bridge: BridgeUnderTest;
  let handle: SimulatedDeviceHandle | undefined;
  const journalAt = journalDir();

  beforeAll(async () => {
    bridge = await startBridge(
      { DEVICE_TOKENS: `${TENANT}:${DEVICE}:secret-1`, EXECUTION_TIMEOUT_MS: '600000' },
      'ormuz-backlog-',
    );
  });
  afterAll(async () => {
    await handle?.close();
    await bridge.close();
    rmSync(journalAt, { recursive: true, force: true });
  });

  const countByStatus = async (): Promise<Record<string, number>> => {
    const { rows } = await sql<{ status: string; n: string }>`
      select status, count(*) as n from ${sql.table(`${DEVICE_BRIDGE_SCHEMA}.executions`)} group by status`.execute(
      bridge.svc.infra.db,
    );
    return Object.fromEntries(rows.map((r) => [r.status, Number(r.n)]));
  };

  it('drains at the device pace on one connection: each call started once and succeeded once', async () => {
    const ids: string[] = [];
    for (let next = 0; next < CALLS;) {
      const batch = Array.from({ length: Math.min(64, CALLS - next) }, (_, i) => next + i);
      next += batch.length;
      const made = await Promise.all(
        batch.map((n) => authorizeCall(bridge.calls, TENANT, `op-${n}`, 'device.screen_observe', {}, DEVICE)),
      );
      ids.push(...made.map((m) => m.callId));
    }
    await waitFor(async () => (await countByStatus())['ready'] === CALLS, {
      message: 'every call projected as ready',
      timeoutMs: 30_000,
    });

    const closes: unknown[] = [];
    const gateway = bridge.svc.app.get(DeviceLinkHost).gateway;
    let largestWindow = 0;
    handle = runSimulatedDevice({
      url: bridge.url,
      tenant: TENANT,
      deviceId: DEVICE,
      token: 'secret-1',
      journalDir: journalAt,
      maxInFlight: WINDOW,
      logger: {
        debug: (message, fields) => {
          if (message.includes('connection closed')) closes.push(fields);
        },
      },
    });
    await waitFor(() => handle!.client.connected, { message: 'the device welcomed' });
    const session = handle.client.session!.session_id;
    expect(handle.client.session!.max_in_flight).toBe(WINDOW);

    const started = Date.now();
    await waitFor(
      async () => {
        const w = gateway.windowOf({ tenant: TENANT, deviceId: DEVICE });
        largestWindow = Math.max(largestWindow, w?.inFlight ?? 0);
        const counts = await countByStatus();
        return counts['finished'] === CALLS;
      },
      { message: 'every call finished', timeoutMs: 100_000, intervalMs: 50 },
    );
    const drainMs = Date.now() - started;

    // One connection throughout: never closed (4005 or otherwise), never replaced.
    expect(closes).toEqual([]);
    expect(handle.client.session?.session_id).toBe(session);
    expect(largestWindow).toBeGreaterThan(0);
    expect(largestWindow).toBeLessThanOrEqual(WINDOW);

    // On the log: per call exactly one start and one success, and nothing unknown, sealed or failed.
    const perCall = new Map<string, string[]>();
    for await (const item of replay(bridge.svc.infra.js, {
      stream: streamName(bridge.namespace, 'calls'),
      filterSubject: `${bridge.namespace}.calls.>`,
    })) {
      if (!item.event) throw new Error(`unreadable event at ${item.seq}: ${item.error}`);
      const callId = item.event.subject;
      perCall.set(callId, [...(perCall.get(callId) ?? []), item.event.type]);
    }
    expect(perCall.size).toBe(CALLS);
    const odd = ids.filter((id) => {
      const types = perCall.get(id) ?? [];
      const count = (t: string) => types.filter((x) => x === t).length;
      return (
        count(ToolCallEventType.Started) !== 1 ||
        count(ToolCallEventType.Succeeded) !== 1 ||
        count(ToolCallEventType.OutcomeUnknown) !== 0 ||
        count(ToolCallEventType.Sealed) !== 0
      );
    });
    expect(odd).toEqual([]);
    // The device's journal agrees: every request ran once and its outcome was acknowledged.
    const entries = ids.map((id) => handle!.client.journalEntry(id));
    expect(entries.filter((e) => e?.state !== 'succeeded' || !e.acked)).toEqual([]);
    process.stdout.write(`backlog of ${CALLS} drained in ${drainMs} ms with a window of ${WINDOW}\n`);
  });
});
