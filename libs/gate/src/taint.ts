/**
 * Taint-aware policy (docs/decisions/0023): whether a write must wait for the owner because the conversation read
 * untrusted content since the user's last message. Pure: the taint, the tenant's rule and the write are passed in.
 *
 * Which writes: a tool whose effect is a write (or a cursor read) and that runs outside the platform (the platform's
 * own `ormuz.*` tools act on nothing outside it). Under the tenant rule `every_write`, each such write is staged while
 * the conversation is tainted. Under `matching` (the default), it is staged when a value it carries appeared in the
 * untrusted content.
 *
 * The values a write carries: every string of its (normalised, validated) arguments, in arrays too, except
 * - parameters whose schema is a closed choice (`enum`: a key, a direction, a setting name): no text flows through
 *   them;
 * - the parameters that point at the screen element a screen action acts on (`ref`, `target_text`,
 *   `foreground_package`, and the `x`/`y` numbers): they are copied from the screen by design, and what they act on is
 *   judged by the risk classifier on the device's own latest observation (docs/decisions/0008).
 *
 * "Appeared in the untrusted content", precisely. Both sides are normalised ({@link normalizeForMatch}): NFKC, lower
 * case, combining marks and invisible format characters (zero-width spaces, bidi marks) removed, every run of
 * characters that are not letters or digits turned into one space. A carried value `v` appeared in an untrusted string
 * `u` when any of these holds:
 * 1. phrase: normalised `v` has at least {@link MIN_MATCH_CHARS} letters or digits and occurs in normalised `u` on
 *    word boundaries (a recipient, a package name, a copied sentence);
 * 2. window: some {@link WINDOW_TOKENS} consecutive words of `v` (together at least {@link MIN_MATCH_CHARS} letters
 *    or digits) occur consecutively in `u`, on word boundaries (a copied phrase inside text the model wrote around it);
 * 3. number: `v` holds at least {@link MIN_MATCH_DIGITS} digits and they occur, in order and adjacent, among the
 *    digits of a run of `u` that holds no letters (`+33 6 12 34 56 78` meets `+33612345678`).
 * The first match found names the source, parameter and an excerpt of the value for the owner.
 */
import { isWriteEffect, type ToolDefinition, type ToolExecutor } from '@ormuz/catalog';
import type { ConversationTaintV1, JsonValue, TaintRuleV1, UntrustedSourceV1 } from '@ormuz/contracts';

/** Fewest letters or digits a value (or a window of it) needs to count as having appeared somewhere. */
export const MIN_MATCH_CHARS = 4;
/** Consecutive words of a longer value that, found together in untrusted content, taint it. */
export const WINDOW_TOKENS = 4;
/** Fewest digits a number needs to be matched by its digits alone. */
export const MIN_MATCH_DIGITS = 6;
/** Longest excerpt of a matched value quoted to the owner, in characters. */
const EXCERPT_CHARS = 32;

/** Parameters that point at the screen element a screen action acts on: judged on the observation, not here. */
const SCREEN_POINTERS = new Set(['ref', 'target_text', 'foreground_package']);

/** A write that must wait for the owner because of the taint, and the owner-facing reason. */
export interface TaintFinding {
  readonly reason: string;
  /** The source the reason names. */
  readonly source: UntrustedSourceV1;
}

/** What the taint check needs of the write. */
export interface TaintedWrite {
  readonly definition: ToolDefinition;
  readonly executor: ToolExecutor;
  readonly args: Readonly<Record<string, JsonValue>>;
}

/**
 * Why this write must wait for the owner under `rule` while the conversation carries `taint`, or `undefined` when the
 * taint does not concern it (no taint, not a write that leaves the platform, nothing it carries appeared there).
 */
export function taintFinding(
  write: TaintedWrite,
  taint: ConversationTaintV1 | undefined,
  rule: TaintRuleV1,
): TaintFinding | undefined {
  if (!taint || taint.sources.length === 0) return undefined;
  if (!isWriteEffect(write.definition.effect) || write.executor === 'platform') return undefined;
  const latest = taint.sources.at(-1)!;
  if (rule === 'every_write') {
    return {
      source: latest,
      reason:
        `requested after reading ${describeSources(taint.sources)}; this tenant has every write wait for the ` +
        'owner while the conversation holds untrusted content',
    };
  }
  for (const [param, value] of carriedValues(write)) {
    // The most recent source first: it is most likely the one the request came from.
    for (const source of [...taint.sources].reverse()) {
      if (source.strings.some((u) => appearsIn(value, u))) {
        return {
          source,
          reason: `requested after reading ${source.description}: its ${param} ${excerpt(value)} appeared there`,
        };
      }
    }
  }
  return undefined;
}

/** Every string the write carries, with the parameter it is in (see the header for what is left out). */
export function carriedValues(write: TaintedWrite): [string, string][] {
  const out: [string, string][] = [];
  for (const [param, value] of Object.entries(write.args)) {
    if (SCREEN_POINTERS.has(param)) continue;
    const schema = write.definition.parameters[param]?.schema as { enum?: unknown } | undefined;
    if (schema && Array.isArray(schema.enum)) continue;
    collectStrings(value, (s) => out.push([param, s]));
  }
  return out;
}

/** True when `value` appeared in `untrusted`, by the three rules of the header. Total on any strings. */
export function appearsIn(value: string, untrusted: string): boolean {
  const v = normalizeForMatch(value);
  const u = ` ${normalizeForMatch(untrusted)} `;
  if (letterCount(v) >= MIN_MATCH_CHARS && u.includes(` ${v} `)) return true;
  const words = v === '' ? [] : v.split(' ');
  for (let i = 0; i + WINDOW_TOKENS <= words.length; i++) {
    const window = words.slice(i, i + WINDOW_TOKENS).join(' ');
    if (letterCount(window) >= MIN_MATCH_CHARS && u.includes(` ${window} `)) return true;
  }
  const digits = digitsOf(value);
  if (digits.length >= MIN_MATCH_DIGITS) {
    return untrusted
      .normalize('NFKC')
      .split(/\p{L}+/u)
      .some((run) => digitsOf(run).includes(digits));
  }
  return false;
}

/**
 * The form both sides are compared in: NFKC, lower case, no combining marks or invisible format characters, and
 * one space for every run of characters that are not letters or digits, trimmed.
 */
export function normalizeForMatch(text: string): string {
  return text
    .normalize('NFKC')
    .toLowerCase()
    .normalize('NFD')
    .replace(/[\p{M}\p{Cf}]/gu, '')
    .normalize('NFC')
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim();
}

function letterCount(normalized: string): number {
  return normalized.replace(/ /g, '').length;
}

function digitsOf(text: string): string {
  return text.normalize('NFKC').replace(/\D/g, '');
}

function collectStrings(value: JsonValue, push: (s: string) => void): void {
  if (typeof value === 'string') push(value);
  else if (Array.isArray(value)) for (const item of value) collectStrings(item, push);
  else if (value !== null && typeof value === 'object')
    for (const item of Object.values(value)) collectStrings(item, push);
}

function excerpt(value: string): string {
  const flat = value.replace(/\s+/g, ' ').trim();
  return JSON.stringify(flat.length <= EXCERPT_CHARS ? flat : `${flat.slice(0, EXCERPT_CHARS - 1)}…`);
}

function describeSources(sources: readonly UntrustedSourceV1[]): string {
  const latest = sources.at(-1)!.description;
  const others = sources.length - 1;
  return others === 0 ? latest : `${latest} and ${others} other untrusted source${others === 1 ? '' : 's'}`;
}
