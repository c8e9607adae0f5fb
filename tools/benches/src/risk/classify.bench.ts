/**
 * The risk classifier on one core, measured beside a raw baseline in the same run: the least any text classifier has
 * to do with a label (NFKC and lower-casing it). Four mixes:
 *
 * - `repeated`: realistic calls (labels in several scripts, payment and unknown apps, key presses, settings) asked
 *   again and again, as an agent does on one screen; the classifier's caches answer most of them.
 * - `unique`: every call a label never seen before (each lexicon word of every language, with a number appended),
 *   so no label is cached: normalisation, segmentation and matching run every time. What is kept across labels is
 *   kept here too, as in use: the segmentation of a word that needs Intl.Segmenter (`ส่งข้อความ`, `确认付款`),
 *   the reason a lexicon word gives, a package's and a tool name's reading, facts about each character.
 * - `unique-cold`: the same, but each word of a script written without spaces (Thai, Lao, Khmer, Myanmar, Chinese,
 *   Japanese) is joined up with another word of its language, a different one each time round, so what
 *   Intl.Segmenter reads is new too: it runs on every such label (about one in twelve).
 * - `long`: 10,000-character labels of every kind that costs most (plain words, Thai and Chinese without spaces,
 *   zero-width characters, stacked marks, look-alike letters, and U+FDFA and U+3300, which NFKC makes 18 and 4
 *   times longer). Only the first 2,000 characters are read, and only as far as they fold within 2,000; the row
 *   `classify.long.expanding` holds the expanding kinds to the slowest of the others.
 *
 * A script that prints figures, not a test; a MISS is printed, the exit code stays 0. Run with
 * `npm run bench:risk [-- --json]` (`--json` prints one line with
 * `results: [{id, figure, baseline, ratio, target, verdict}]`).
 */
import { performance } from 'node:perf_hooks';
import { classifyRisk, HIGH_RISK_CONCEPTS, type RiskInput } from '@ormuz/risk';

const TARGET_P99_US = 20;
/** Expanding long labels may cost at most this many times the slowest other kind of long label. */
const TARGET_EXPANDING_RATIO = 1.5;

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

const ENTRIES = HIGH_RISK_CONCEPTS.flatMap((c) =>
  Object.entries(c.words).flatMap(([language, words]) => (words ?? []).map((word) => ({ language, word }))),
);
const WORDS = ENTRIES.map((e) => e.word);
const UNSPACED = /[\p{sc=Thai}\p{sc=Lao}\p{sc=Khmer}\p{sc=Myanmar}\p{sc=Han}\p{sc=Hiragana}\p{sc=Katakana}]/u;
/** For each word of a script written without spaces, the other words of its language; for other words, none. */
const PARTNERS = ENTRIES.map(({ language, word }) =>
  UNSPACED.test(word) ? ENTRIES.filter((e) => e.language === language && e.word !== word).map((e) => e.word) : [],
);
const tap = (i: number, target_text: string): RiskInput => ({
  tool: 'device.tap',
  args: { ref: `e${i}` },
  target_text,
  foreground_package: 'com.example.messages',
});
const unique = (i: number) => tap(i, `${WORDS[i % WORDS.length]} ${i}`);
const uniqueCold = (i: number) => {
  const w = i % WORDS.length;
  const partners = PARTNERS[w] as string[];
  // Each time round the lexicon the word gets the next partner: a pair the segmenter has not read before.
  const partner = partners.length === 0 ? '' : partners[Math.floor(i / WORDS.length) % partners.length];
  return tap(i, `${WORDS[w]}${partner} ${i}`);
};

const LONG_KINDS: readonly (readonly [name: string, unit: string, expands: boolean])[] = [
  ['plain words', 'open the map ', false],
  ['Thai without spaces', 'แผนที่ข้อความ', false],
  ['Chinese without spaces', '打开地图消息', false],
  ['zero-width characters', 'a\u200B', false],
  ['stacked marks', 'a\u0301\u0302\u0303\u0304', false],
  ['look-alike letters', 'm\u0430p ', false],
  ['U+FDFA (NFKC: 18 characters)', '\uFDFA', true],
  ['U+3300 (NFKC: 4 characters)', '\u3300', true],
];
const LONG_LENGTH = 10_000;
const longLabels = LONG_KINDS.map(([, unit]) => unit.repeat(Math.ceil(LONG_LENGTH / unit.length)));
// Each label starts with its number, so what is read of it (short enough to cache, for U+FDFA) is new every time.
const long = (i: number) => tap(i, `${i} ${longLabels[i % longLabels.length] as string}`.slice(0, LONG_LENGTH));

interface Measured {
  readonly n: number;
  readonly perSecond: number;
  readonly p50: number;
  readonly p99: number;
}

/** Per-call latency of `run(i)` over `n` calls (µs), and the rate of a pass without per-call timers. */
function measure(n: number, run: (i: number) => unknown, warmUp = Math.min(n, 20_000)): Measured {
  for (let i = 0; i < warmUp; i++) run(i);
  const start = performance.now();
  for (let i = 0; i < n; i++) run(i);
  const seconds = (performance.now() - start) / 1000;
  const samples = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    run(i + n);
    samples[i] = (performance.now() - t0) * 1000;
  }
  return { n, perSecond: Math.round(n / seconds), ...percentiles(samples) };
}

function percentiles(samples: Float64Array): { p50: number; p99: number } {
  const sorted = samples.slice().sort();
  const pct = (p: number) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] as number;
  return { p50: pct(0.5), p99: pct(0.99) };
}

/** Per-kind median latency (µs) of the long labels: `rounds` calls of each kind, kinds interleaved. */
function longByKind(rounds: number, run: (i: number) => unknown): number[] {
  const kinds = longLabels.length;
  const samples = longLabels.map(() => new Float64Array(rounds));
  for (let i = 0; i < kinds * 4; i++) run(i);
  for (let r = 0; r < rounds; r++) {
    for (let k = 0; k < kinds; k++) {
      const t0 = performance.now();
      run(r * kinds + k);
      (samples[k] as Float64Array)[r] = (performance.now() - t0) * 1000;
    }
  }
  return samples.map((s) => percentiles(s).p50);
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
  {
    id: 'unique-cold',
    measure: 'unique labels, new pieces to segment',
    classify: measure(40_000, (i) => classifyRisk(uniqueCold(i + 1_000_000))),
    baseline: measure(40_000, (i) => raw(uniqueCold(i + 1_000_000))),
  },
  {
    id: 'long',
    measure: `${LONG_LENGTH.toLocaleString('en')}-character labels`,
    classify: measure(1_600, (i) => classifyRisk(long(i)), 160),
    baseline: measure(1_600, (i) => raw(long(i)), 160),
  },
];
const longKinds = longByKind(100, (i) => classifyRisk(long(i)));
const slowest = (expands: boolean) =>
  LONG_KINDS.map(([name, , e], k) => ({ name, us: longKinds[k] as number, e }))
    .filter((k) => k.e === expands)
    .reduce((a, b) => (b.us > a.us ? b : a));
const expanding = slowest(true);
const other = slowest(false);

const us = (v: number) => `${v.toFixed(2)} µs`;
const rows = [
  ...mixes.flatMap((m) => [
    {
      id: `classify.${m.id}.p99`,
      measure: `${m.measure}: p99`,
      figure: us(m.classify.p99),
      baseline: `${us(m.baseline.p99)} raw NFKC + lower case`,
      ratio: m.classify.p99 / m.baseline.p99,
      // Long labels are read up to their bounds; their row says what they cost, the bound is for short ones.
      target: m.id === 'long' ? '' : `≤ ${TARGET_P99_US} µs`,
      verdict: m.id === 'long' ? 'info' : m.classify.p99 <= TARGET_P99_US ? 'PASS' : 'MISS',
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
  ]),
  {
    id: 'classify.long.expanding',
    measure: `slowest expanding long label: median`,
    figure: `${us(expanding.us)} ${expanding.name}`,
    baseline: `${us(other.us)} ${other.name}`,
    ratio: expanding.us / other.us,
    target: `≤ ${TARGET_EXPANDING_RATIO}× baseline`,
    verdict: expanding.us <= TARGET_EXPANDING_RATIO * other.us ? 'PASS' : 'MISS',
  },
];

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
      detail: {
        ...Object.fromEntries(mixes.map((m) => [m.id, { classify: m.classify, baseline: m.baseline }])),
        long_p50_by_kind_us: Object.fromEntries(LONG_KINDS.map(([name], k) => [name, longKinds[k]])),
      },
    }),
  );
} else {
  console.log(`risk classifier bench — node ${process.version}, ${WORDS.length} lexicon words, one core`);
  for (const r of rows) {
    console.log(
      `${r.measure.padEnd(52)} ${r.figure.padStart(12)}   baseline ${r.baseline.padEnd(34)} ${r.ratio.toFixed(2)}×  ${r.target} ${r.verdict === 'info' ? '' : r.verdict}`,
    );
  }
  for (const [name] of LONG_KINDS) {
    console.log(`  long label, ${name}: median ${us(longKinds[LONG_KINDS.findIndex(([n]) => n === name)] as number)}`);
  }
}
