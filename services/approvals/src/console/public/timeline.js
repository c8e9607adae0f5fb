// A call's event timeline as a picture: one lane per source (the service that recorded the event), the events left
// to right in log order, a line through them with the time between each two, and brackets over the waits that matter
// to an owner (how long the call waited for a decision, how long it ran). Events are spaced evenly rather than by
// time: a call that waited an hour for its owner and ran in 40 ms would otherwise draw as one dot.
import { duration, eventName, h, s, sourceName, when } from './dom.js';

const LABEL_WIDTH = 112;
const COLUMN = 116;
const LANE = 64;
const TOP = 26;
const BRACKET_SPACE = 46;

/** Spans drawn as brackets: from an event to the first of the closing events after it. */
const SPANS = [
  { from: 'staged', to: ['approved', 'denied', 'expired', 'sealed'], label: 'waited for the owner' },
  { from: 'started', to: ['succeeded', 'failed', 'outcome_unknown'], label: 'ran' },
];

/** The SVG of `entries` (policy.status's timeline: `{ seq, type, time, source }`, in log order), titled `title`. */
export function drawTimeline(entries, title) {
  const lanes = [...new Set(entries.map((e) => sourceName(e.source)))];
  const width = LABEL_WIDTH + Math.max(1, entries.length) * COLUMN;
  const height = TOP + lanes.length * LANE + BRACKET_SPACE;
  const x = (i) => LABEL_WIDTH + i * COLUMN + COLUMN / 2;
  const y = (e) => TOP + lanes.indexOf(sourceName(e.source)) * LANE + LANE / 2;
  const times = entries.map((e) => new Date(e.time).getTime());
  const spans = findSpans(entries, times);

  const description = entries
    .map((e, i) => `${i + 1}. ${eventName(e.type)} by ${sourceName(e.source)} at ${when(e.time)}`)
    .concat(spans.map((sp) => `${sp.label}: ${duration(sp.ms)}`))
    .join('; ');

  return s(
    'svg',
    {
      class: 'timeline',
      viewBox: `0 0 ${width} ${height}`,
      width,
      height,
      role: 'img',
      'aria-labelledby': 'timeline-title timeline-desc',
    },
    s('title', { id: 'timeline-title' }, title),
    s('desc', { id: 'timeline-desc' }, description),
    // Lanes.
    lanes.map((lane, i) =>
      s(
        'g',
        { class: 'lane', 'data-lane': lane },
        s('rect', { x: 0, y: TOP + i * LANE, width, height: LANE, class: i % 2 ? 'lane-odd' : 'lane-even' }),
        s('text', { x: 8, y: TOP + i * LANE + LANE / 2 + 4, class: 'lane-label' }, lane),
      ),
    ),
    // The path through the events, with the time between each two.
    entries.slice(1).map((e, i) => {
      const prev = entries[i];
      const mid = (x(i) + x(i + 1)) / 2;
      return s(
        'g',
        { class: 'step' },
        s('line', { x1: x(i), y1: y(prev), x2: x(i + 1), y2: y(e), class: 'link' }),
        s('text', { x: mid, y: Math.min(y(prev), y(e)) - 12, class: 'gap' }, `+${duration(times[i + 1] - times[i])}`),
      );
    }),
    // The events.
    entries.map((e, i) =>
      s(
        'g',
        { class: `event event-${eventName(e.type)}`, 'data-seq': e.seq, 'data-type': eventName(e.type) },
        s('title', {}, `#${e.seq} ${eventName(e.type)} — ${sourceName(e.source)}, ${when(e.time)}`),
        s('circle', { cx: x(i), cy: y(e), r: 7 }),
        s('text', { x: x(i), y: y(e) + 22, class: 'event-label' }, eventName(e.type)),
      ),
    ),
    // The waits.
    spans.map((sp) => {
      const yb = TOP + lanes.length * LANE + 14;
      return s(
        'g',
        { class: 'span', 'data-span': sp.label },
        s('path', { d: `M${x(sp.i)},${yb - 8} V${yb} H${x(sp.j)} V${yb - 8}`, class: 'bracket' }),
        s('text', { x: (x(sp.i) + x(sp.j)) / 2, y: yb + 18, class: 'span-label' }, `${sp.label} ${duration(sp.ms)}`),
      );
    }),
  );
}

function findSpans(entries, times) {
  const names = entries.map((e) => eventName(e.type));
  const spans = [];
  for (const span of SPANS) {
    const i = names.indexOf(span.from);
    if (i < 0) continue;
    const j = names.findIndex((n, k) => k > i && span.to.includes(n));
    if (j < 0) continue;
    spans.push({ i, j, ms: times[j] - times[i], label: span.label });
  }
  return spans;
}

/** The same events as an ordered list, for reading rather than looking. */
export function timelineList(entries) {
  return h(
    'ol',
    { class: 'event-list' },
    entries.map((e) => h('li', {}, h('strong', {}, eventName(e.type)), ` — ${sourceName(e.source)}, ${when(e.time)}`)),
  );
}
