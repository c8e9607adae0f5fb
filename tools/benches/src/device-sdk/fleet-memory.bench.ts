/**
 * Memory of a simulated fleet: heap (and external buffers) per connected device, after every device ran one request.
 *
 *   npm run bench:fleet -- [--count 1000] [--json]
 *
 * The bridge runs in a child process (a minimal protocol peer: welcome, grant every claim, acknowledge every
 * outcome), so only the devices are measured here. For scale, the same run first measures as many bare `ws` client
 * connections (open, idle) to the same peer. Heap figures are taken after a forced GC (the script restarts
 * itself with --expose-gc). With --json the last line is one JSON object.
 */
import { fork, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { WebSocket, WebSocketServer } from 'ws';
import { DeviceFrameCodec, canonicalPayload, type DeviceFrameDraft } from '@ormuz/contracts';
import { runSimulatedFleet } from '@ormuz/device-sdk';

const script = fileURLToPath(import.meta.url);
const args = process.argv.slice(2);
const json = args.includes('--json');
const countArg = args.indexOf('--count');
const count = countArg >= 0 ? Number(args[countArg + 1]) : 1_000;

/** The child: a bridge stand-in that speaks just enough of the protocol. */
async function bridge(): Promise<void> {
  const server = new WebSocketServer({ host: '127.0.0.1', port: 0, perMessageDeflate: false });
  await new Promise((resolve) => server.once('listening', resolve));
  const devices = new Map<string, { ws: WebSocket; codec: DeviceFrameCodec }>();
  server.on('connection', (ws: WebSocket) => {
    const codec = new DeviceFrameCodec();
    const send = (draft: DeviceFrameDraft) => ws.send(codec.encode(draft));
    ws.on('message', (data: Buffer) => {
      const frame = codec.decode(data.toString('utf8'));
      if (frame.type === 'hello') {
        devices.set(frame.device_id, { ws, codec });
        send({
          type: 'welcome',
          tenant: frame.tenant,
          device_id: frame.device_id,
          session_id: `s-${frame.device_id}`,
          protocol_version: 1,
          server_time: new Date().toISOString(),
          heartbeat_interval_ms: 600_000,
          max_frame_bytes: 256 * 1024,
        });
      } else if (frame.type === 'start_claim') send({ type: 'start_granted', request_id: frame.request_id });
      else if (frame.type === 'outcome') send({ type: 'outcome_ack', request_id: frame.request_id });
    });
  });
  const { payload, sha256 } = canonicalPayload({ package_name: 'com.example.contacts' });
  process.on('message', (message) => {
    if (message !== 'submit-all') return;
    const deadline = new Date(Date.now() + 120_000).toISOString();
    for (const [deviceId, { ws, codec }] of devices) {
      ws.send(
        codec.encode({
          type: 'submit',
          request_id: `bench-${deviceId}`,
          call_id: `call-${deviceId}`,
          tool: 'device.open_app',
          payload,
          payload_sha256: sha256,
          deadline,
          verdict: { level: 'low', reasons: [] },
        }),
      );
    }
  });
  const address = server.address();
  process.send!({ port: typeof address === 'object' && address ? address.port : 0 });
}

async function until(what: string, predicate: () => boolean, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

function settle(): NodeJS.MemoryUsage {
  const gc = (globalThis as { gc?: () => void }).gc!;
  for (let i = 0; i < 3; i++) gc();
  return process.memoryUsage();
}

/** Heap per idle, open, bare `ws` client connection, in KiB. */
async function bareClients(url: string): Promise<number> {
  const before = settle();
  const sockets = Array.from({ length: count }, () => new WebSocket(url, { perMessageDeflate: false }));
  let open = 0;
  for (const ws of sockets) ws.once('open', () => (open += 1));
  await until('every bare client to connect', () => open === count);
  const after = settle();
  await Promise.all(
    sockets.map(
      (ws) =>
        new Promise((resolve) => {
          ws.once('close', resolve);
          ws.terminate();
        }),
    ),
  );
  return (after.heapUsed - before.heapUsed) / count / 1024;
}

async function main(): Promise<void> {
  if (!Number.isInteger(count) || count < 1) throw new Error('--count must be a positive whole number');
  const child = fork(script, ['--bridge'], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const port = await new Promise<number>((resolve) =>
    child.once('message', (m) => resolve((m as { port: number }).port)),
  );
  const root = mkdtempSync(join(tmpdir(), 'ormuz-fleet-bench-'));
  try {
    const bare = await bareClients(`ws://127.0.0.1:${port}/v1/devices`);
    const before = settle();
    const began = performance.now();
    const fleet = runSimulatedFleet({
      url: `ws://127.0.0.1:${port}/v1/devices`,
      tenant: 'bench',
      count,
      token: 'bench-token',
      journalRoot: root,
      backoff: { initialDelayMs: 100, maxDelayMs: 2_000 },
    });
    await until('every device to connect', () => fleet.connectedCount() === count);
    const connectedMs = performance.now() - began;
    const connected = settle();
    child.send('submit-all');
    await until('every request to be acknowledged', () =>
      fleet.devices.every((d) => d.client.journalEntry(`bench-${d.deviceId}`)?.acked),
    );
    const ran = settle();
    const per = (after: NodeJS.MemoryUsage, key: keyof NodeJS.MemoryUsage) => (after[key] - before[key]) / count / 1024;
    const figures = {
      devices: count,
      bare_ws_client_heap_kib: +bare.toFixed(2),
      connect_all_ms: Math.round(connectedMs),
      heap_kib_per_device_connected: +per(connected, 'heapUsed').toFixed(2),
      heap_kib_per_device_after_one_request: +per(ran, 'heapUsed').toFixed(2),
      external_kib_per_device: +per(ran, 'external').toFixed(2),
      rss_kib_per_device: +per(ran, 'rss').toFixed(2),
    };
    await fleet.close();
    console.log(`simulated fleet of ${count} devices (one process, one timer wheel):`);
    console.log(`  all connected in ${figures.connect_all_ms} ms`);
    console.log(`  heap per bare ws client (same run):     ${figures.bare_ws_client_heap_kib} KiB`);
    console.log(`  heap per device, connected:             ${figures.heap_kib_per_device_connected} KiB`);
    console.log(`  heap per device, after one request:     ${figures.heap_kib_per_device_after_one_request} KiB`);
    console.log(`  external (buffers) per device:          ${figures.external_kib_per_device} KiB`);
    console.log(`  RSS per device:                         ${figures.rss_kib_per_device} KiB`);
    if (json) console.log(JSON.stringify(figures));
  } finally {
    child.kill();
    rmSync(root, { recursive: true, force: true });
  }
}

if (args.includes('--bridge')) {
  await bridge();
} else if (!(globalThis as { gc?: unknown }).gc) {
  const run = spawnSync(process.execPath, ['--expose-gc', script, ...args], { stdio: 'inherit' });
  process.exit(run.status ?? 1);
} else {
  await main();
}
