/**
 * Throughput of the risk classifier on one core: prints classifications per second and per-call percentiles for a
 * mix of realistic calls (labels in several scripts, payment and unknown apps, key presses, settings). A script that
 * prints figures, not a test. Run after `npm run build`: `node libs/risk/dist/bench/classify.bench.js [--json]`.
 */
import { performance } from 'node:perf_hooks';
import { classifyRisk, type RiskInput } from '../index.js';

const LABELS = [
  'Send',
  'Sender',
  'Repayment history',
  'Confirm transfer',
  'Open settings',
  'Passer la commande',
  'Jetzt kaufen',
  'Отправить сообщение',
  'Αποστολή',
  'إرسال الآن',
  'שלח הודעה',
  'भुगतान करें',
  'ส่งข้อความ',
  '보내기',
  '今すぐ購入する',
  '确认付款',
  'Weather in Lisbon today: 21°C, light wind from the north-west',
];
const PACKAGES = ['com.example.messages', 'com.example.bank', 'com.paypal.android.p2pmobile', 'org.acme.notes', null];

const calls: RiskInput[] = [];
for (const [i, target_text] of LABELS.entries()) {
  for (const [j, foreground_package] of PACKAGES.entries()) {
    calls.push({ tool: 'device.tap', args: { ref: `e${i}${j}` }, target_text, foreground_package });
  }
}
calls.push({ tool: 'device.press_key', args: { key: 'KEYCODE_POWER' }, foreground_package: 'com.example.messages' });
calls.push({ tool: 'device.toggle_setting', args: { setting: 'airplane_mode' } });
calls.push({ tool: 'device.send_message', args: { recipient: 'Ann', message_body: 'On my way' } });

const warmup = 20_000;
for (let i = 0; i < warmup; i++) classifyRisk(calls[i % calls.length] as RiskInput);

// Throughput without per-call timers, then per-call latency in a second pass.
const n = 200_000;
const start = performance.now();
for (let i = 0; i < n; i++) classifyRisk(calls[i % calls.length] as RiskInput);
const seconds = (performance.now() - start) / 1000;
const samples = new Float64Array(n);
for (let i = 0; i < n; i++) {
  const t0 = performance.now();
  classifyRisk(calls[i % calls.length] as RiskInput);
  samples[i] = performance.now() - t0;
}
samples.sort();
const pct = (p: number) => (samples[Math.min(n - 1, Math.floor(p * n))] as number) * 1000;
const result = {
  classifications: n,
  distinct_calls: calls.length,
  per_second: Math.round(n / seconds),
  p50_us: Number(pct(0.5).toFixed(1)),
  p99_us: Number(pct(0.99).toFixed(1)),
};
if (process.argv.includes('--json')) console.log(JSON.stringify(result));
else {
  console.log(`risk classifier: ${result.per_second.toLocaleString('en')} classifications/s on one core`);
  console.log(
    `  per call: p50 ${result.p50_us} µs, p99 ${result.p99_us} µs (${n.toLocaleString('en')} calls over ${calls.length} distinct inputs)`,
  );
}
