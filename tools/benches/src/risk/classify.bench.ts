/**
 * The risk classifier on one core, measured beside a raw baseline in the same run: the least any text classifier has
 * to do with a label (NFKC and lower-casing it). Two mixes:
 *
 * - `repeated`: realistic calls (labels in several scripts, payment and unknown apps, key presses, settings) asked
 *   again and again, as an agent does on one screen; the classifier's caches answer most of them.
 * - `unique`: every call a label never seen before (lexicon words in every language, with a number appended), so
 *   nothing is cached: normalisation, segmentation and matching run every time.
 *
 * A script that prints figures, not a test; a MISS is printed, the exit code stays 0. Run after `npm run build`:
 * `node libs/risk/dist/bench/classify.bench.js [--json]` (`--json` prints one line with
 * `results: [{id, figure, baseline, ratio, target, verdict}]`).
 */
import { performance } from 'node:perf_hooks';
import { classifyRisk, HIGH_RISK_CONCEPTS, type RiskInput } from '@ormuz/risk';

const TARGET_P99_US = 20;

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

const repeated: RiskInput[] = [];
for (const [i, target_text] of LABELS.entries()) {
  for (const [j, foreground_package] of PACKAGES.entries()) {
    repeated.push({ tool: 'device.tap', args: { ref: `e${i}${j}` }, target_text, foreground_package });
  }
}
repeated.push({ tool: 'device.press_key', args: { key: 'KEYCODE_POWER' }, foreground_package: 'com.example.messages' });
repeated.push({ tool: 'device.toggle_setting', args: { setting: 'airplane_mode' } });
repeated.push({ tool: 'device.send_message', args: { recipient: 'Ann', message_body: 'On my way' } });

const WORDS = HIGH_RISK_CONCEPTS.flatMap((c) => Object.values(c.words).flatMap((w) => w ?? []));
const unique = (i: number): RiskInput => ({
  tool: 'device.tap',
  args: { ref: `e${i}` },
  target_text: `${WORDS[i % WORDS.length]} ${i}`,
  foreground_package: 'com.example.messages',
});

interface Measured {
  readonly n: number;
  readonly perSecond: number;
  readonly p50: number;
  readonly p99: number;
}

/** Per-call latency of `run(i)` over `n` calls (µs), and the rate of a pass without per-call timers. */
function measure(n: number, run: (i: number) => unknown): Measured {
  for (let i = 0; i < Math.min(n, 20_000); i++) run(i);
  const start = performance.now();
  for (let i = 0; i < n; i++) run(i);
  const seconds = (performance.now() - start) / 1000;
  const samples = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    run(i + n);
    samples[i] = (performance.now() - t0) * 1000;
  }
  samples.sort();
  const pct = (p: number) => samples[Math.min(n - 1, Math.floor(p * n))] as number;
  return { n, perSecond: Math.round(n / seconds), p50: pct(0.5), p99: pct(0.99) };
}

const raw = (input: RiskInput) => (input.target_text ?? '').normalize('NFKC').toLowerCase();
const mixes = [
  {
    id: 'repeated',
    measure: `repeated mix (${repeated.length} distinct calls)`,
    classify: measure(200_000, (i) => classifyRisk(repeated[i % repeated.length] as RiskInput)),
    baseline: measure(200_000, (i) => raw(repeated[i % repeated.length] as RiskInput)),
  },
  {
    id: 'unique',
    measure: 'unique labels (nothing cached)',
    classify: measure(40_000, (i) => classifyRisk(unique(i))),
    baseline: measure(40_000, (i) => raw(unique(i))),
  },
];

const us = (v: number) => `${v.toFixed(2)} µs`;
const rows = mixes.flatMap((m) => [
  {
    id: `classify.${m.id}.p99`,
    measure: `${m.measure}: p99`,
    figure: us(m.classify.p99),
    baseline: `${us(m.baseline.p99)} raw NFKC + lower case`,
    ratio: m.classify.p99 / m.baseline.p99,
    target: `≤ ${TARGET_P99_US} µs`,
    verdict: m.classify.p99 <= TARGET_P99_US ? 'PASS' : 'MISS',
  },
  {
    id: `classify.${m.id}.rate`,
    measure: `${m.measure}: per second`,
    figure: m.classify.perSecond.toLocaleString('en'),
    baseline: `${m.baseline.perSecond.toLocaleString('en')} raw`,
    ratio: m.classify.perSecond / m.baseline.perSecond,
    target: '',
    verdict: 'info',
  },
]);

if (process.argv.includes('--json')) {
  console.log(
    JSON.stringify({
      bench: 'risk',
      node: process.version,
      lexicon_words: WORDS.length,
      results: rows.map(({ id, figure, baseline, ratio, target, verdict }) => ({
        id,
        figure,
        baseline,
        ratio,
        target,
        verdict,
      })),
      detail: Object.fromEntries(mixes.map((m) => [m.id, { classify: m.classify, baseline: m.baseline }])),
    }),
  );
} else {
  console.log(`risk classifier bench — node ${process.version}, ${WORDS.length} lexicon words, one core`);
  for (const r of rows) {
    console.log(
      `${r.measure.padEnd(52)} ${r.figure.padStart(12)}   baseline ${r.baseline.padEnd(34)} ${r.ratio.toFixed(2)}×  ${r.target} ${r.verdict === 'info' ? '' : r.verdict}`,
    );
  }
}
