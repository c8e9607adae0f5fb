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

const STOP_WORDS = new Set(
  (
    'a an and are as at be by can do does for from has have how i if in into is it its me my of on or so ' +
    'that the then this to use used uses using was what when which while who will with you your'
  ).split(' '),
);

/**
 * Lowercase content words of `text`: split on anything that is not a letter or digit and on snake/camel/dot
 * boundaries, stop words dropped, a plural `s` trimmed so `contacts` meets `contact`.
 */
export function words(text: string): string[] {
  const out: string[] = [];
  for (const raw of text
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

/**
 * Optimal-string-alignment edit distance (insert, delete, substitute, swap adjacent), capped: returns `cap + 1` as
 * soon as the distance must exceed `cap`, so long inputs cost little.
 */
export function editDistance(a: string, b: string, cap = 8): number {
  if (Math.abs(a.length - b.length) > cap) return cap + 1;
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
