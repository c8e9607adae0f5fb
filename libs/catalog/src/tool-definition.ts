/**
 * What a tool is, as its extension declares it: the contract a model is offered and the gate enforces.
 */
import type { JsonSchema, JsonValue } from '@ormuz/contracts';

/** Who chooses a parameter's value: the model (validated choice) or the designer (locked by configuration). */
export type ParameterController = 'model' | 'designer';

/**
 * What a call does to the world. `cursor_read` is a read that advances a cursor somewhere else: it is treated as a
 * write for idempotency (see {@link isWriteEffect}).
 */
export type ToolEffect = 'read' | 'write' | 'cursor_read';

/**
 * How risky a call is: `low` runs, `high` is staged for an owner's approval, `classify` lets the deterministic risk
 * classifier decide per call from what the action targets.
 */
export type RiskLevel = 'low' | 'high' | 'classify';

/**
 * Who runs a call of the tool once policy lets it run. `device`: the phone the conversation acts on, through the
 * device bridge; a call without a device is refused. `platform`: the runtime itself (model-loop runs the core
 * `ormuz.*` tools); only the core manifest may declare it. Policy turns it into the call's target when it records
 * the call, and everything downstream routes by that record, never by the tool's name.
 */
export type ToolExecutor = 'device' | 'platform';

/** Every {@link ToolExecutor}. */
export const TOOL_EXECUTORS: readonly ToolExecutor[] = Object.freeze(['device', 'platform']);

/** The executor of a tool that declares none: extensions published before `executor` existed run on the device. */
export const DEFAULT_TOOL_EXECUTOR: ToolExecutor = 'device';

/** One declared parameter. Every parameter is required unless `optional` is true. */
export interface ParameterDefinition {
  /** JSON Schema (draft 2020-12) of this parameter's value. */
  readonly schema: JsonSchema;
  /**
   * What the value holds, for the model. Its first clause (up to `;` or `.`) is quoted in validation messages, so
   * start with the essence: "Pixels from the left edge of the screen; ...".
   */
  readonly description: string;
  /** `designer` parameters take their value from {@link DesignerConfig} and are never shown to or accepted from a model. */
  readonly controller: ParameterController;
  /** Model parameters only: the call may leave it out. */
  readonly optional?: boolean;
}

/**
 * A rule over optional parameters that JSON Schema's `required` cannot say in words: exactly one group of `oneOf`
 * must be sent complete, and nothing from the other groups. Answered with `message`, a plain instruction.
 */
export interface CombinationRule {
  readonly oneOf: readonly (readonly string[])[];
  /** The instruction a model gets when the rule is broken, e.g. "Send a ref ..., or both x and y." */
  readonly message: string;
}

/** What a successful call returns. */
export interface OutputContract {
  readonly description: string;
  /** JSON Schema (draft 2020-12) of the result. */
  readonly schema: JsonSchema;
}

/** One version of one tool. */
export interface ToolDefinition {
  /** `<extension>.<snake_case>`; the prefix equals the manifest's `metadata.name`. */
  readonly name: string;
  /** Contract version, a positive integer. Any contract change (see {@link contractHash}) needs a new one. */
  readonly version: number;
  /** A decision procedure for the model: when to use it, what it returns, when it fails. */
  readonly description: string;
  /** Parameter name (snake_case) to definition, in the order the model should read them. */
  readonly parameters: Readonly<Record<string, ParameterDefinition>>;
  readonly combinations?: readonly CombinationRule[];
  readonly effect: ToolEffect;
  readonly risk_level: RiskLevel;
  /** Who runs a call; {@link DEFAULT_TOOL_EXECUTOR} when left out. Part of the contract (see {@link contractHash}). */
  readonly executor?: ToolExecutor;
  /** How long an executor may take, in milliseconds, before the outcome is unknown. */
  readonly timeout_ms: number;
  /** Optional only so a catalog without one can load and be reported by the lint; every shipped tool has one. */
  readonly output?: OutputContract;
  /** Keywords naming the skills this tool serves; used by search and by suggestions for unknown names. */
  readonly skills?: readonly string[];
  /**
   * The sentence an owner reads before approving a call, as a template over the call's values, e.g.
   * `Send a text message to {recipient}: {message_body|quote}`; see {@link renderOwnerSummary} for the syntax. When
   * left out, owners read `Run <tool> with <arguments>`. Wording, not contract: changing it needs no new version.
   */
  readonly owner_summary?: string;
}

/**
 * Locked values of designer-controlled parameters: tool name → parameter → value. The same value applies to every
 * version of the tool that declares the parameter.
 */
export type DesignerConfig = Readonly<Record<string, Readonly<Record<string, JsonValue>>>>;

/** The core identity, reserved for the platform's own tools. */
export const CORE_EXTENSION_NAME = 'ormuz';

/** snake_case: lowercase words of letters and digits joined by single underscores, starting with a letter. */
export const SNAKE_CASE_PATTERN = /^[a-z][a-z0-9]*(?:_[a-z0-9]+)*$/;

/** Longest tool name (`<extension>.<tool>`), in characters: providers cap function names at 64. */
export const MAX_TOOL_NAME_LENGTH = 64;

/** Who runs calls of `definition`: its declared executor, or {@link DEFAULT_TOOL_EXECUTOR}. */
export function executorOf(definition: Pick<ToolDefinition, 'executor'>): ToolExecutor {
  return definition.executor ?? DEFAULT_TOOL_EXECUTOR;
}

/** True when a call with this effect changes something and therefore needs an idempotency key. */
export function isWriteEffect(effect: ToolEffect): boolean {
  switch (effect) {
    case 'read':
      return false;
    case 'write':
    case 'cursor_read':
      return true;
    default: {
      const unknown: never = effect;
      throw new Error(`unknown effect ${String(unknown)}`);
    }
  }
}

/** Splits `<extension>.<tool>` into its parts, or `undefined` when `name` does not have exactly that shape. */
export function splitToolName(name: string): { extension: string; tool: string } | undefined {
  const dot = name.indexOf('.');
  if (dot <= 0 || dot !== name.lastIndexOf('.') || dot === name.length - 1) return undefined;
  return { extension: name.slice(0, dot), tool: name.slice(dot + 1) };
}

/** Explains why `name` is not a valid `<extension>.<snake_case>` tool name, or `undefined` when it is one. */
export function toolNameProblem(name: string): string | undefined {
  const parts = splitToolName(name);
  if (!parts) return 'it must be <extension>.<snake_case>, with exactly one dot';
  if (!SNAKE_CASE_PATTERN.test(parts.extension)) return `the extension part "${parts.extension}" is not snake_case`;
  if (!SNAKE_CASE_PATTERN.test(parts.tool)) return `the tool part "${parts.tool}" is not snake_case`;
  if (name.length > MAX_TOOL_NAME_LENGTH)
    return `it is ${name.length} characters long; the limit is ${MAX_TOOL_NAME_LENGTH}`;
  return undefined;
}
