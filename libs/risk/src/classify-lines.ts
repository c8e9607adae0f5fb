/**
 * JSON lines in, JSON lines out: the pure core of `ormuz risk classify`. Each input line is one call
 * (`{"tool","args","target_text","foreground_package","target_role"?,"screen_text"?}`); each output line is its
 * verdict (`{"level","reasons","fix"?}`) or, for a line that cannot be read, `{"error":{"code","message"}}` with a
 * message that says what to send instead.
 */
import { explainText, type WordExplanation } from './explain.js';
import { classifyRisk, type RiskClassifierOptions, type RiskInput, type RiskLevel } from './risk-classifier.js';
import { financialScreenEvidence } from './financial-screen.js';
import { TOGGLE_ROLES } from './system-actions.js';

/** Why a line could not be classified. */
export type LineErrorCode = 'malformed_json' | 'schema_violation' | 'unknown_tool';

/**
 * Tells whether a tool exists: `undefined` for a known tool, else a sentence that says so and names the closest real
 * tools (the catalog's answer to an unknown name). The classifier judges any name it is given; without this check an
 * invented tool (`device.nuke`) would be rated on its words alone.
 */
export type ToolCheck = (tool: string) => string | undefined;

/** The outcome of one line: its output line, and whether the input was well formed. */
export interface LineResult {
  readonly ok: boolean;
  /** One JSON object, no trailing newline. */
  readonly output: string;
}

/**
 * What the command line gives every line (`ormuz risk classify --role`, `--screen-text`): the observation's facts an
 * operator types once instead of on each line, and whether to explain.
 */
export interface LineContext {
  /** Add `explain` to each verdict: the words of the target text that matched, and what the role and screen did. */
  readonly explain?: boolean;
  /** The target element's role, for every line (a line that gives another one is refused). */
  readonly targetRole?: string;
  /** The texts of the screen's elements, for every line (a line that gives others is refused). */
  readonly screenText?: readonly string[];
}

/** What the target's role or the screen's text did to one verdict (`explain.target_role`, `explain.screen_text`). */
export interface InputEffect {
  /** The level the same call gets without the input. */
  readonly level_without: RiskLevel;
  /** One sentence: what the input changed, or where the classifier reads it when it changed nothing. */
  readonly effect: string;
  /** Reasons the verdict has only because of the input. */
  readonly reasons: readonly string[];
}

const KEYS = ['tool', 'args', 'target_text', 'foreground_package', 'target_role', 'screen_text'] as const;
const ALLOWED = new Set<string>(KEYS);
const EXAMPLE =
  '{"tool":"device.tap","args":{"ref":"e12"},"target_text":"Send","foreground_package":"com.example.messages"}';
const MAX_TOOL_LENGTH = 256;
const MAX_ROLE_LENGTH = 64;
const TOGGLE_ROLE_SET = new Set(TOGGLE_ROLES);

function snake(key: string): string {
  return key
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .replace(/-/g, '_')
    .toLowerCase();
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}

/**
 * Reads one parsed line as a {@link RiskInput}, or lists what is wrong with it (each problem a sentence fragment that
 * names the field and what to send instead). `args` may be omitted (read as `{}`); `target_text`,
 * `foreground_package`, `target_role` and `screen_text` may be omitted or `null` (the last two are then left out of
 * the input). Unknown keys are refused, never dropped.
 */
export function parseRiskInput(value: unknown): { ok: true; input: RiskInput } | { ok: false; problems: string[] } {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return { ok: false, problems: [`the line must hold a JSON object, not ${describe(value)}`] };
  }
  const record = value as Record<string, unknown>;
  const problems: string[] = [];
  for (const key of Object.keys(record)) {
    if (ALLOWED.has(key)) continue;
    const hint = ALLOWED.has(snake(key)) ? ` (did you mean "${snake(key)}"?)` : '';
    problems.push(`${JSON.stringify(key.slice(0, 64))} is not a field${hint}; the fields are ${KEYS.join(', ')}`);
  }
  const { tool, args, target_text, foreground_package, target_role, screen_text } = record;
  if (typeof tool !== 'string' || tool.trim() === '' || tool.length > MAX_TOOL_LENGTH) {
    problems.push(
      `tool must be the tool's name as a non-empty string of at most ${MAX_TOOL_LENGTH} characters, e.g. "device.tap"`,
    );
  }
  if (args !== undefined && (typeof args !== 'object' || args === null || Array.isArray(args))) {
    problems.push(`args must be an object of named arguments (or left out), not ${describe(args)}`);
  }
  if (target_text !== undefined && target_text !== null && typeof target_text !== 'string') {
    problems.push(`target_text must be the target element's text as a string, or null, not ${describe(target_text)}`);
  }
  if (foreground_package !== undefined && foreground_package !== null && typeof foreground_package !== 'string') {
    problems.push(
      `foreground_package must be the package name from the latest observation as a string, or null, not ${describe(foreground_package)}`,
    );
  }
  if (
    target_role !== undefined &&
    target_role !== null &&
    (typeof target_role !== 'string' || target_role.trim() === '' || target_role.length > MAX_ROLE_LENGTH)
  ) {
    problems.push(
      `target_role must be the target element's role from the latest observation as a non-empty string of at most ${MAX_ROLE_LENGTH} characters (e.g. "switch", "list_item"), or null, not ${describe(target_role)}`,
    );
  }
  if (
    screen_text !== undefined &&
    screen_text !== null &&
    (!Array.isArray(screen_text) || screen_text.some((t) => typeof t !== 'string'))
  ) {
    problems.push(
      `screen_text must be the texts of the screen's elements as an array of strings, or null, not ${Array.isArray(screen_text) ? 'an array holding a non-string' : describe(screen_text)}`,
    );
  }
  if (problems.length > 0) return { ok: false, problems };
  return {
    ok: true,
    input: {
      tool: tool as string,
      args: (args ?? {}) as Record<string, unknown>,
      target_text: (target_text ?? null) as string | null,
      foreground_package: (foreground_package ?? null) as string | null,
      ...(typeof target_role === 'string' ? { target_role } : {}),
      ...(Array.isArray(screen_text) ? { screen_text: screen_text as string[] } : {}),
    },
  };
}

const sameTexts = (a: readonly string[], b: readonly string[]) =>
  a.length === b.length && a.every((t, i) => t === b[i]);

/**
 * The line's input with the command line's role and screen text filled in, or the fields given twice with different
 * values (a line that says `"target_role":"button"` run with `--role switch` is ambiguous: it is refused, not guessed).
 */
function withContext(input: RiskInput, context: LineContext): { input: RiskInput; conflicts: string[] } {
  const conflicts: string[] = [];
  let merged = input;
  if (context.targetRole !== undefined) {
    if (input.target_role != null && input.target_role !== context.targetRole) {
      conflicts.push(
        `target_role is ${JSON.stringify(input.target_role.slice(0, 64))} on the line and ${JSON.stringify(context.targetRole.slice(0, 64))} from --role`,
      );
    }
    merged = { ...merged, target_role: context.targetRole };
  }
  if (context.screenText !== undefined) {
    if (input.screen_text != null && !sameTexts(input.screen_text, context.screenText)) {
      conflicts.push('screen_text on the line differs from the texts given by --screen-text or --screen-text-file');
    }
    merged = { ...merged, screen_text: context.screenText };
  }
  return { input: merged, conflicts };
}

/** What `field` of `input` did to `verdict`: the verdict of the same call without it, compared. */
function effectOf(
  input: RiskInput,
  field: 'target_role' | 'screen_text',
  verdict: { level: RiskLevel; reasons: readonly string[] },
  options: RiskClassifierOptions | undefined,
): InputEffect {
  const { [field]: _given, ...rest } = input;
  const without = classifyRisk(rest as RiskInput, options);
  const before = new Set(without.reasons);
  const reasons = verdict.reasons.filter((r) => !before.has(r));
  const name = field === 'target_role' ? 'the role' : 'the screen text';
  let effect: string;
  if (without.level !== verdict.level)
    effect = `${name} makes the verdict ${verdict.level} (${without.level} without it)`;
  else if (reasons.length > 0 || without.reasons.length !== verdict.reasons.length)
    effect = `${name} changes the reasons, not the level (${verdict.level} either way)`;
  else if (field === 'target_role')
    effect = 'none on this call: the role is read for a tap in a Settings app, where a switch changes a setting';
  else
    effect =
      'none on this call: the screen text is read for a screen action in an app on no list, to tell a finance app by its screen';
  return { level_without: without.level, effect, reasons };
}

function errorLine(code: LineErrorCode, message: string): LineResult {
  return { ok: false, output: JSON.stringify({ error: { code, message } }) };
}

/**
 * Classifies one input line. `lineNumber` (1-based) only appears in error messages. With `checkTool`, a tool it does
 * not know gets an `unknown_tool` error line instead of a verdict. `context` gives every line a role and screen text
 * and asks for `explain`. Never throws (unless `checkTool` does).
 */
export function classifyLine(
  line: string,
  lineNumber: number,
  options?: RiskClassifierOptions,
  checkTool?: ToolCheck,
  context: LineContext = {},
): LineResult {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch (err) {
    return errorLine(
      'malformed_json',
      `Line ${lineNumber} is not valid JSON (${(err as Error).message}). Send one JSON object per line, e.g. ${EXAMPLE}.`,
    );
  }
  const parsed = parseRiskInput(value);
  if (!parsed.ok) {
    return errorLine(
      'schema_violation',
      `Line ${lineNumber} is not a call to classify: ${parsed.problems.join('; ')}. For example: ${EXAMPLE}.`,
    );
  }
  const { input, conflicts } = withContext(parsed.input, context);
  if (conflicts.length > 0) {
    return errorLine(
      'schema_violation',
      `Line ${lineNumber} gives a field twice: ${conflicts.join('; ')}. Give it on the line or on the command line, not both.`,
    );
  }
  const unknown = checkTool?.(input.tool);
  if (unknown !== undefined) {
    return errorLine(
      'unknown_tool',
      `Line ${lineNumber} names a tool that does not exist, so it has no risk: ${unknown}`,
    );
  }
  const verdict = classifyRisk(input, options);
  const out: Record<string, unknown> = { level: verdict.level, reasons: verdict.reasons };
  if (verdict.fix !== undefined) out.fix = verdict.fix;
  if (context.explain) out.explain = explanation(input, verdict, options);
  return { ok: true, output: JSON.stringify(out) };
}

/**
 * `explain` of one verdict: the lexicon's matches in the target text and, when the call gives them, what the target's
 * role and the screen's text did (each compared with the verdict the call gets without it).
 */
function explanation(
  input: RiskInput,
  verdict: { level: RiskLevel; reasons: readonly string[] },
  options: RiskClassifierOptions | undefined,
): Record<string, unknown> {
  const text = input.target_text;
  const out: { target_text: WordExplanation[]; target_role?: unknown; screen_text?: unknown } = {
    target_text: text ? explainText(text) : [],
  };
  if (input.target_role != null) {
    const role = input.target_role.trim().toLowerCase();
    out.target_role = { role, toggle: TOGGLE_ROLE_SET.has(role), ...effectOf(input, 'target_role', verdict, options) };
  }
  if (input.screen_text != null) {
    out.screen_text = {
      texts: input.screen_text.length,
      evidence: financialScreenEvidence(input.screen_text),
      ...effectOf(input, 'screen_text', verdict, options),
    };
  }
  return out;
}

/**
 * Classifies JSON lines: one output line per non-blank input line, in order (blank and whitespace-only lines, such as
 * a trailing newline, are skipped; error messages give physical line numbers). A bad line yields an error line and
 * the rest are still classified.
 */
export function classifyLines(
  lines: readonly string[],
  options?: RiskClassifierOptions,
  checkTool?: ToolCheck,
): string[] {
  const out: string[] = [];
  lines.forEach((line, i) => {
    if (line.trim() !== '') out.push(classifyLine(line, i + 1, options, checkTool).output);
  });
  return out;
}
