import { ServiceMetrics } from '@ormuz/service-kit';
import { parseExposition } from '@ormuz/testing';
import { BridgeMetrics } from './metrics.js';

describe('device-bridge metrics', () => {
  it('counts outcomes, times reported ones from their authorization, and reads the connections at scrape time', async () => {
    const registry = new ServiceMetrics('device-bridge');
    const metrics = new BridgeMetrics(registry);
    let connected = 2;
    metrics.countConnections(() => connected);
    const now = new Date('2026-01-01T12:00:00Z');
    metrics.recorded('succeeded', new Date('2026-01-01T11:59:59.5Z'), now);
    metrics.recorded('failed', null, now);
    metrics.recorded('outcome_unknown', new Date('2026-01-01T11:00:00Z'), now);
    connected = 3;
    const scrape = parseExposition((await registry.exposition()).body);
    expect(scrape.value('ormuz_bridge_connected_devices', { service: 'device-bridge' })).toBe(3);
    expect(scrape.value('ormuz_bridge_outcomes_total', { outcome: 'succeeded' })).toBe(1);
    expect(scrape.value('ormuz_bridge_outcomes_total', { outcome: 'outcome_unknown' })).toBe(1);
    expect(scrape.value('ormuz_bridge_call_seconds_bucket', { outcome: 'succeeded', le: '0.5' })).toBe(1);
    expect(scrape.value('ormuz_bridge_call_seconds_sum', { outcome: 'succeeded' })).toBe(0.5);
    // Neither a failure without its authorization time nor an unknown outcome is timed.
    expect(scrape.value('ormuz_bridge_call_seconds_count')).toBe(1);
  });
});
