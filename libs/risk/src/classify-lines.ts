/**
 * JSON lines in, JSON lines out: the pure core of `ormuz risk classify`. Each input line is one call
 * (`{"tool","args","target_text","foreground_package"}`); each output line is its verdict (`{"level","reasons","fix"?}`)
 * or, for a line that cannot be read, `{"error":{"code","message"}}` with a message that says what to send instead.
 */
import { explainText } from './explain.js';
import { classifyRisk, type RiskClassifierOptions, type RiskInput } from './risk-classifier.js';

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

const KEYS = ['tool', 'args', 'target_text', 'foreground_package'] as const;
const ALLOWED = new Set<string>(KEYS);
const EXAMPLE =
  '{"tool":"device.tap","args":{"ref":"e12"},"target_text":"Send","foreground_package":"com.example.messages"}';
const MAX_TOOL_LENGTH = 256;

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
 * names the field and what to send instead). `args` may be omitted (read as `{}`); `target_text` and
 * `foreground_package` may be omitted or `null`. Unknown keys are refused, never dropped.
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
  const { tool, args, target_text, foreground_package } = record;
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
  if (problems.length > 0) return { ok: false, problems };
  return {
    ok: true,
    input: {
      tool: tool as string,
      args: (args ?? {}) as Record<string, unknown>,
      target_text: (target_text ?? null) as string | null,
      foreground_package: (foreground_package ?? null) as string | null,
    },
  };
}

function errorLine(code: LineErrorCode, message: string): LineResult {
  return { ok: false, output: JSON.stringify({ error: { code, message } }) };
}

/**
 * Classifies one input line. `lineNumber` (1-based) only appears in error messages. With `checkTool`, a tool it does
 * not know gets an `unknown_tool` error line instead of a verdict. Never throws (unless `checkTool` does).
 */
export function classifyLine(
  line: string,
  lineNumber: number,
  options?: RiskClassifierOptions,
  checkTool?: ToolCheck,
  explain = false,
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
  const unknown = checkTool?.(parsed.input.tool);
  if (unknown !== undefined) {
    return errorLine(
      'unknown_tool',
      `Line ${lineNumber} names a tool that does not exist, so it has no risk: ${unknown}`,
    );
  }
  const verdict = classifyRisk(parsed.input, options);
  const out: Record<string, unknown> = { level: verdict.level, reasons: verdict.reasons };
  if (verdict.fix !== undefined) out.fix = verdict.fix;
  if (explain) {
    const text = parsed.input.target_text;
    out.explain = { target_text: text ? explainText(text) : [] };
  }
  return { ok: true, output: JSON.stringify(out) };
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
