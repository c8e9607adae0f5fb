/**
 * The tool catalog: every loaded tool version with its contract hash and compiled validators, refused at load when a
 * manifest breaks a naming, versioning, schema or configuration rule.
 */
import type { JsonSchema, JsonValue } from '@ormuz/contracts';
import { compileSchema, type ValidateFunction } from './ajv.js';
import { setCompiled } from './compiled.js';
import { contractHash } from './contract-lock.js';
import { CatalogError, type CatalogProblem } from './errors.js';
import { MANIFEST_API_VERSION, manifestShapeProblems, type ExtensionManifest } from './manifest.js';
import { modelSchema } from './model-schema.js';
import { ownerSummaryProblem } from './owner-summary.js';
import {
  CORE_EXTENSION_NAME,
  executorOf,
  SNAKE_CASE_PATTERN,
  splitToolName,
  toolNameProblem,
  type DesignerConfig,
  type ToolDefinition,
  type ToolExecutor,
} from './tool-definition.js';

/** One loaded tool version. Frozen; compare versions by `version`, contracts by `contractHash`. */
export interface CatalogEntry {
  readonly name: string;
  readonly version: number;
  /** The extension key (the name's prefix). */
  readonly extension: string;
  /** True for the platform's own `ormuz` tools. */
  readonly core: boolean;
  /** Who runs a call of this version: the declared executor, or the default (see {@link executorOf}). */
  readonly executor: ToolExecutor;
  readonly definition: ToolDefinition;
  /** Hex SHA-256 of the contract; see {@link contractHash}. */
  readonly contractHash: string;
  /** Model-controlled parameter names, in declaration order. */
  readonly modelParameters: readonly string[];
  /** Designer-controlled parameter names, in declaration order. */
  readonly designerParameters: readonly string[];
  /** The configured value of each designer parameter. */
  readonly designerValues: Readonly<Record<string, JsonValue>>;
  /** The schema a model is shown; see {@link modelSchema}. */
  readonly modelSchema: JsonSchema;
}

/** A loaded extension, without its tools. */
export interface CatalogExtension {
  readonly name: string;
  readonly version: string;
  readonly description: string;
  readonly core: boolean;
}

/** Options of {@link Catalog.load}. */
export interface CatalogLoadOptions {
  /** The platform's own manifest, the only one allowed to be named `ormuz`. */
  readonly core?: ExtensionManifest;
  /** Values of every designer-controlled parameter. */
  readonly designer?: DesignerConfig;
}

/** Parameter names that would collide with JavaScript object internals; refused as names, refused as keys. */
export const RESERVED_PARAMETER_NAMES: ReadonlySet<string> = new Set(['__proto__', 'constructor', 'prototype']);

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const key of Object.keys(value)) deepFreeze((value as Record<string, unknown>)[key]);
  }
  return value;
}

/**
 * A deep copy of plain data (objects, arrays, strings, numbers, booleans, null), detached from the caller's objects.
 * Throws on anything else (functions, class instances, symbols). Written out rather than `structuredClone`, whose
 * copies belong to the host realm and fail plain-object checks inside sandboxes such as test VMs.
 */
function clonePlain<T>(value: T, path = '$'): T {
  if (value === null || typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') {
    return value;
  }
  if (Array.isArray(value)) return value.map((item, i) => clonePlain(item, `${path}[${i}]`)) as T;
  if (typeof value === 'object') {
    const proto = Object.getPrototypeOf(value) as unknown;
    if (proto === Object.prototype || proto === null) {
      const out: Record<string, unknown> = {};
      for (const [key, item] of Object.entries(value)) {
        if (item !== undefined) out[key] = clonePlain(item, `${path}.${key}`);
      }
      return out as T;
    }
  }
  throw new Error(`${path} is ${typeof value === 'object' ? 'not a plain object' : `a ${typeof value}`}`);
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/**
 * An immutable set of tool versions. Build it with {@link Catalog.load}; several versions of one tool coexist, and
 * {@link Catalog.resolve} never substitutes one version for another.
 */
export class Catalog {
  private constructor(
    readonly extensions: readonly CatalogExtension[],
    private readonly byName: ReadonlyMap<string, readonly CatalogEntry[]>,
    /** The designer configuration the catalog was loaded with. */
    readonly designer: DesignerConfig,
  ) {}

  /**
   * Loads and checks manifests. Throws {@link CatalogError} listing every problem: a manifest that is not an
   * extension manifest, an extension named twice, a non-core extension named `ormuz`, a tool whose prefix differs
   * from its manifest's `metadata.name`, names that are not snake_case, a duplicate name@version, malformed
   * parameters or combination rules, a JSON Schema ajv cannot compile, a `platform` executor outside the core
   * manifest, an owner summary template that does not parse or names a value the tool does not have, a designer
   * parameter without a (valid) configured value, and designer configuration for parameters no loaded tool declares
   * as designer-controlled.
   */
  static load(manifests: readonly ExtensionManifest[], options: CatalogLoadOptions = {}): Catalog {
    const problems: CatalogProblem[] = [];
    const designer = options.designer ?? {};
    const extensions: CatalogExtension[] = [];
    const byName = new Map<string, CatalogEntry[]>();

    const sources: { manifest: unknown; core: boolean }[] = [
      ...(options.core === undefined ? [] : [{ manifest: options.core, core: true }]),
      ...manifests.map((manifest) => ({ manifest: manifest as unknown, core: false })),
    ];
    for (const { manifest, core } of sources) {
      const shape = manifestShapeProblems(manifest);
      if (shape.length > 0) {
        const name = (manifest as { metadata?: { name?: unknown } } | null)?.metadata?.name;
        const label = typeof name === 'string' ? `Extension ${JSON.stringify(name)}` : 'A manifest';
        problems.push({
          rule: 'invalid_manifest',
          ...(typeof name === 'string' ? { extension: name } : {}),
          message: `${label} is not an ${MANIFEST_API_VERSION} Extension manifest: ${shape.join('; ')}.`,
        });
        continue;
      }
      const m = manifest as ExtensionManifest;
      const ext = m.metadata.name;
      if (core && ext !== CORE_EXTENSION_NAME) {
        problems.push({
          rule: 'reserved_name',
          extension: ext,
          message: `The core manifest must be named "${CORE_EXTENSION_NAME}", not ${JSON.stringify(ext)}.`,
        });
        continue;
      }
      if (!core && ext === CORE_EXTENSION_NAME) {
        problems.push({
          rule: 'reserved_name',
          extension: ext,
          message: `Extension "${CORE_EXTENSION_NAME}" is reserved for the platform's core tools; give the extension its own name.`,
        });
        continue;
      }
      if (!SNAKE_CASE_PATTERN.test(ext)) {
        problems.push({
          rule: 'invalid_name',
          extension: ext,
          message: `Extension name ${JSON.stringify(ext)} is not snake_case (lowercase letters and digits joined by single underscores).`,
        });
        continue;
      }
      if (extensions.some((e) => e.name === ext)) {
        problems.push({
          rule: 'duplicate_extension',
          extension: ext,
          message: `Extension "${ext}" is loaded twice; load each extension once, with all its tool versions.`,
        });
        continue;
      }
      extensions.push({ name: ext, version: m.metadata.version, description: m.metadata.description, core });
      for (const tool of m.tools) {
        const entry = loadTool(tool, ext, core, designer, problems);
        if (!entry) continue;
        const versions = byName.get(entry.name) ?? [];
        if (versions.some((v) => v.version === entry.version)) {
          problems.push({
            rule: 'duplicate_version',
            extension: ext,
            tool: entry.name,
            message: `${entry.name}@${entry.version} is declared twice; each version is declared once (publish a change as a new version).`,
          });
          continue;
        }
        versions.push(entry);
        byName.set(entry.name, versions);
      }
    }
    // Only on an otherwise clean load: a tool that failed to load would make its configuration look unused.
    if (problems.length === 0) checkDesignerConfigUsed(designer, byName, problems);
    if (problems.length > 0) throw new CatalogError(problems);
    for (const versions of byName.values()) versions.sort((a, b) => a.version - b.version);
    const sorted = new Map([...byName.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
    return new Catalog(Object.freeze(extensions), sorted, deepFreeze(clonePlain(designer)));
  }

  /** Every tool version, by name then version. */
  entries(): readonly CatalogEntry[] {
    return [...this.byName.values()].flat();
  }

  /** Every tool name, sorted. */
  toolNames(): readonly string[] {
    return [...this.byName.keys()];
  }

  /** True when some version of `name` is loaded. */
  has(name: string): boolean {
    return this.byName.has(name);
  }

  /** Loaded versions of `name`, ascending; empty when unknown. */
  versions(name: string): readonly number[] {
    return (this.byName.get(name) ?? []).map((e) => e.version);
  }

  /**
   * The entry for `name` at exactly `pinnedVersion`, or the latest version when no pin is given. A pinned version
   * that is not loaded gives `undefined`: a pin is never moved to another (broader) version.
   */
  resolve(name: string, pinnedVersion?: number): CatalogEntry | undefined {
    const versions = this.byName.get(name);
    if (!versions) return undefined;
    if (pinnedVersion === undefined) return versions.at(-1);
    return versions.find((v) => v.version === pinnedVersion);
  }

  /** The extension called `name`, if loaded. */
  extension(name: string): CatalogExtension | undefined {
    return this.extensions.find((e) => e.name === name);
  }
}

function loadTool(
  raw: ToolDefinition,
  ext: string,
  core: boolean,
  designer: DesignerConfig,
  problems: CatalogProblem[],
): CatalogEntry | undefined {
  const before = problems.length;
  const at = `${raw.name}@${raw.version}`;
  const fail = (rule: CatalogProblem['rule'], message: string): void => {
    problems.push({ rule, extension: ext, tool: raw.name, message });
  };

  const nameProblem = toolNameProblem(raw.name);
  if (nameProblem) {
    fail('invalid_name', `Tool name ${JSON.stringify(raw.name)} is invalid: ${nameProblem}.`);
    return undefined;
  }
  const prefix = splitToolName(raw.name)!.extension;
  if (prefix !== ext) {
    fail(
      prefix === CORE_EXTENSION_NAME ? 'reserved_name' : 'prefix_mismatch',
      prefix === CORE_EXTENSION_NAME
        ? `${raw.name} uses the reserved prefix "${CORE_EXTENSION_NAME}"; extension "${ext}" must name its tools "${ext}.<snake_case>".`
        : `${raw.name} does not start with its extension's name; in extension "${ext}" name it "${ext}.${splitToolName(raw.name)!.tool}".`,
    );
    return undefined;
  }

  let definition: ToolDefinition;
  try {
    definition = deepFreeze(clonePlain(raw));
  } catch (err) {
    fail(
      'invalid_manifest',
      `${at} cannot be copied as plain data (${errorText(err)}); declare it with JSON values only.`,
    );
    return undefined;
  }

  const modelParameters: string[] = [];
  const designerParameters: string[] = [];
  for (const [name, parameter] of Object.entries(definition.parameters)) {
    if (!SNAKE_CASE_PATTERN.test(name) || RESERVED_PARAMETER_NAMES.has(name)) {
      fail('invalid_name', `${at} parameter ${JSON.stringify(name)} is not a usable snake_case name; rename it.`);
      continue;
    }
    if (parameter.controller === 'designer') {
      if (parameter.optional === true) {
        fail(
          'invalid_parameter',
          `${at} parameter "${name}" is designer-controlled and marked optional; designer parameters always take their configured value, so remove "optional".`,
        );
      }
      designerParameters.push(name);
    } else {
      modelParameters.push(name);
    }
  }

  for (const rule of definition.combinations ?? []) {
    const seen = new Set<string>();
    for (const name of rule.oneOf.flat()) {
      const parameter = definition.parameters[name];
      if (!Object.hasOwn(definition.parameters, name) || !parameter) {
        fail('invalid_combination', `${at} combination names "${name}", which is not a parameter of the tool.`);
      } else if (parameter.controller !== 'model' || parameter.optional !== true) {
        fail(
          'invalid_combination',
          `${at} combination names "${name}", which must be an optional model parameter (the rule decides which are required).`,
        );
      } else if (seen.has(name)) {
        fail(
          'invalid_combination',
          `${at} combination names "${name}" in more than one group; each parameter belongs to one group.`,
        );
      }
      seen.add(name);
    }
  }

  const executor = executorOf(definition);
  if (executor === 'platform' && !core) {
    fail(
      'invalid_executor',
      `${at} declares executor "platform", which only the core manifest's tools may: the platform runs its own tools only. Declare "device", or leave executor out.`,
    );
  }
  const summaryProblem = ownerSummaryProblem(definition);
  if (summaryProblem) fail('invalid_summary', `${at} owner_summary cannot be used: ${summaryProblem}.`);

  const properties: Record<string, JsonSchema> = {};
  const required: string[] = [];
  for (const [name, parameter] of Object.entries(definition.parameters)) {
    properties[name] = parameter.schema;
    if (parameter.controller === 'designer' || parameter.optional !== true) required.push(name);
  }
  const compile = (what: string, schema: JsonSchema): ValidateFunction | undefined => {
    try {
      return compileSchema(schema);
    } catch (err) {
      fail('invalid_schema', `${at} ${what} has an invalid JSON Schema (draft 2020-12): ${errorText(err)}.`);
      return undefined;
    }
  };
  const validateDesignerValue = new Map<string, ValidateFunction>();
  let parametersCompile = true;
  for (const [name, parameter] of Object.entries(definition.parameters)) {
    const validate = compile(`parameter "${name}"`, parameter.schema);
    if (!validate) parametersCompile = false;
    else if (parameter.controller === 'designer') validateDesignerValue.set(name, validate);
  }
  const validateArguments = parametersCompile
    ? compile('argument object', { type: 'object', properties, required, additionalProperties: false })
    : undefined;
  const validateOutput = definition.output ? compile('output', definition.output.schema) : undefined;

  const designerValues: Record<string, JsonValue> = {};
  const configured = Object.hasOwn(designer, definition.name) ? designer[definition.name] : undefined;
  for (const name of designerParameters) {
    if (!configured || !Object.hasOwn(configured, name)) {
      fail(
        'designer_value_missing',
        `${at} parameter "${name}" is designer-controlled but has no configured value; set designer["${definition.name}"]["${name}"].`,
      );
      continue;
    }
    const value = configured[name]!;
    const validate = validateDesignerValue.get(name);
    if (validate && !validate(value)) {
      fail(
        'designer_value_invalid',
        `${at} parameter "${name}" is configured as ${JSON.stringify(value)}, which its schema refuses (${validate.errors?.[0]?.message ?? 'invalid'}); fix the configured value.`,
      );
      continue;
    }
    designerValues[name] = value;
  }

  let hash: string | undefined;
  try {
    hash = contractHash(definition);
  } catch (err) {
    fail(
      'invalid_schema',
      `${at} has no canonical JSON form (${errorText(err)}); use finite numbers and plain JSON values.`,
    );
  }
  if (problems.length > before || !validateArguments || !hash) return undefined;

  const entry: CatalogEntry = deepFreeze({
    name: definition.name,
    version: definition.version,
    extension: ext,
    core,
    executor,
    definition,
    contractHash: hash,
    modelParameters,
    designerParameters,
    designerValues: clonePlain(designerValues),
    modelSchema: modelSchema(definition),
  });
  setCompiled(entry, { validateArguments, validateDesignerValue, validateOutput });
  return entry;
}

function checkDesignerConfigUsed(
  designer: DesignerConfig,
  byName: ReadonlyMap<string, readonly CatalogEntry[]>,
  problems: CatalogProblem[],
): void {
  for (const [tool, values] of Object.entries(designer)) {
    const versions = byName.get(tool);
    for (const parameter of Object.keys(values)) {
      if (versions?.some((v) => v.designerParameters.includes(parameter))) continue;
      problems.push({
        rule: 'designer_config_unknown',
        tool,
        message: versions
          ? `Designer configuration sets ${tool} "${parameter}", which no loaded version declares as a designer parameter; remove it (a model parameter cannot be locked by configuration).`
          : `Designer configuration names ${tool}, which is not in the catalog; remove it or load the extension that ships it.`,
      });
    }
  }
}
