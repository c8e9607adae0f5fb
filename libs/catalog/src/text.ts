// Small text utilities shared by normalisation, messages, suggestions, search and lint. Pure, bounded and total:
// none of them throws on any string.

/** `nameQuery`, `name-query`, `NameQuery`, `name query` → `name_query`. */
export function toSnakeCase(key: string): string {
  return key
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1_$2')
    .replace(/[-\s]+/g, '_')
    .toLowerCase();
}

/** `text` as a short JSON string literal for a message: at most `max` characters, then an ellipsis. */
export function quote(text: string, max = 40): string {
  return text.length > max ? `${JSON.stringify(text.slice(0, max))}…` : JSON.stringify(text);
}

/**
 * Words that say nothing about which tool is meant: function words, politeness, and the JSON literals a model's
 * arguments are full of.
 */
const STOP_WORDS = new Set(
  (
    'a an and are as at be by can could do does for from has have how i if in into is it its me my no not of on ' +
    'or please so that the then there this to use used uses using was what when which while who will with would ' +
    'you your null true false'
  ).split(' '),
);

/** Longest text looked at, in characters: enough for a task or a description, bounded for hostile input. */
export const MAX_WORDS_TEXT = 8_000;

/**
 * The one tokenizer of tool names, descriptions, skills, search queries and tasks (catalog search, suggestions, lint,
 * and model-loop's tool selection), so a word means the same everywhere: the first {@link MAX_WORDS_TEXT} characters
 * of `text`, split on anything that is not a letter or digit and at snake, camel and dot boundaries, lower-cased,
 * stop words dropped, a plural `s` trimmed so `contacts` meets `contact`. Total on any string.
 */
export function contentWords(text: string): string[] {
  const out: string[] = [];
  for (const raw of text
    .slice(0, MAX_WORDS_TEXT)
    .replace(/([a-z])([A-Z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)) {
    if (raw === '' || STOP_WORDS.has(raw)) continue;
    out.push(raw.length > 3 && raw.endsWith('s') && !raw.endsWith('ss') ? raw.slice(0, -1) : raw);
  }
  return out;
}

/** Jaccard overlap of two word lists, 0 to 1. */
export function wordOverlap(a: readonly string[], b: readonly string[]): number {
  const left = new Set(a);
  const right = new Set(b);
  if (left.size === 0 || right.size === 0) return 0;
  let shared = 0;
  for (const w of left) if (right.has(w)) shared++;
  return shared / (left.size + right.size - shared);
}

// Three rows of the edit-distance table, reused across calls (grown when a longer string comes): a call allocates
// nothing.
let rowA = new Int32Array(64);
let rowB = new Int32Array(64);
let rowC = new Int32Array(64);

/**
 * Optimal-string-alignment edit distance (insert, delete, substitute, swap adjacent), capped: returns `cap + 1` as
 * soon as the distance must exceed `cap`, so long inputs cost little. Only the diagonal band of width `cap` on
 * either side is computed (a cell further out is more than `cap` away), with values held at `cap + 1`.
 */
export function editDistance(a: string, b: string, cap = 8): number {
  const n = a.length;
  const m = b.length;
  if (Math.abs(n - m) > cap) return cap + 1;
  if (!Number.isInteger(cap) || cap < 0 || cap > 0xffff) return fullEditDistance(a, b, cap);
  const over = cap + 1;
  if (m + 2 > rowA.length) {
    const size = Math.max(m + 2, rowA.length * 2);
    rowA = new Int32Array(size);
    rowB = new Int32Array(size);
    rowC = new Int32Array(size);
  }
  let prevPrev = rowA;
  let prev = rowB;
  let row = rowC;
  for (let j = 0; j <= m; j++) prev[j] = j <= cap ? j : over;
  for (let i = 1; i <= n; i++) {
    const lo = i - cap > 1 ? i - cap : 1;
    const hi = i + cap < m ? i + cap : m;
    // The cell left of the band: column 0 (distance i), or a cell outside the band.
    const left = lo === 1 && i <= cap ? i : over;
    row[lo - 1] = left;
    let rowMin = left;
    const ca = a.charCodeAt(i - 1);
    const pa = i > 1 ? a.charCodeAt(i - 2) : -1;
    for (let j = lo; j <= hi; j++) {
      const cb = b.charCodeAt(j - 1);
      let d = prev[j - 1]! + (ca === cb ? 0 : 1);
      const del = prev[j]! + 1;
      if (del < d) d = del;
      const ins = row[j - 1]! + 1;
      if (ins < d) d = ins;
      if (j > 1 && pa === cb && ca === b.charCodeAt(j - 2)) {
        const swap = prevPrev[j - 2]! + 1;
        if (swap < d) d = swap;
      }
      if (d > over) d = over;
      row[j] = d;
      if (d < rowMin) rowMin = d;
    }
    // The cell right of the band, which the next row reads above its own last cell.
    if (hi < m) row[hi + 1] = over;
    if (rowMin > cap) return over;
    const spare = prevPrev;
    prevPrev = prev;
    prev = row;
    row = spare;
  }
  return Math.min(prev[m]!, over);
}

/** {@link editDistance} over the whole table, for a cap that is not a small whole number. */
function fullEditDistance(a: string, b: string, cap: number): number {
  let prevPrev: number[] = [];
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    let rowMin = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let d = Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d = Math.min(d, prevPrev[j - 2]! + 1);
      row.push(d);
      rowMin = Math.min(rowMin, d);
    }
    if (rowMin > cap) return cap + 1;
    prevPrev = prev;
    prev = row;
  }
  return Math.min(prev[b.length]!, cap + 1);
}

/** True when `text` holds an unpaired UTF-16 surrogate, which has no UTF-8 form. */
export function hasLoneSurrogate(text: string): boolean {
  return /\p{Cs}/u.test(text);
}
