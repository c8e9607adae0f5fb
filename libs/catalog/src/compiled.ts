// Compiled validators of each catalog entry, kept off the public entry object: only the catalog writes them and only
// validation reads them.
import type { ValidateFunction } from './ajv.js';
import type { CatalogEntry } from './catalog.js';

export interface CompiledTool {
  /** The whole argument object: every parameter, designer ones included, `additionalProperties: false`. */
  readonly validateArguments: ValidateFunction;
  /** Each designer parameter's own schema, to check a designer value supplied per call. */
  readonly validateDesignerValue: ReadonlyMap<string, ValidateFunction>;
  readonly validateOutput: ValidateFunction | undefined;
}

const compiledTools = new WeakMap<CatalogEntry, CompiledTool>();

export function setCompiled(entry: CatalogEntry, compiled: CompiledTool): void {
  compiledTools.set(entry, compiled);
}

/** The validators of an entry; an entry that did not come from {@link Catalog.load} has none. */
export function compiledOf(entry: CatalogEntry): CompiledTool | undefined {
  return compiledTools.get(entry);
}
