import { OrmuzError } from '@ormuz/contracts';

/** Why a catalog, a manifest or a designer configuration was refused. Stable codes; tests and tools match on them. */
export type CatalogProblemRule =
  | 'invalid_manifest'
  | 'duplicate_extension'
  | 'reserved_name'
  | 'prefix_mismatch'
  | 'invalid_name'
  | 'duplicate_version'
  | 'invalid_parameter'
  | 'invalid_combination'
  | 'invalid_schema'
  /** A tool declares an executor its manifest may not use (`platform` outside the core manifest). */
  | 'invalid_executor'
  /** A tool's `owner_summary` template does not parse, or names a value the tool does not have. */
  | 'invalid_summary'
  | 'designer_value_missing'
  | 'designer_value_invalid'
  | 'designer_config_unknown';

/** One reason a catalog cannot load, with the extension and tool it concerns when known. */
export interface CatalogProblem {
  readonly rule: CatalogProblemRule;
  readonly extension?: string;
  readonly tool?: string;
  /** A sentence that says what is wrong and what to change. */
  readonly message: string;
}

/**
 * Raised by {@link Catalog.load} (and by name encoding) when the catalog cannot be trusted. Carries every problem
 * found, not only the first, so an operator fixes a manifest in one pass.
 */
export class CatalogError extends OrmuzError {
  readonly code = 'catalog_invalid';
  constructor(readonly problems: readonly CatalogProblem[]) {
    super(
      problems.length === 1
        ? problems[0]!.message
        : `The catalog has ${problems.length} problems:\n${problems.map((p) => `- ${p.message}`).join('\n')}`,
    );
  }
}

/** Raised when `catalog.lock.json` cannot be read or does not have the lock's shape. */
export class ContractLockError extends OrmuzError {
  readonly code = 'contract_lock_invalid';
}

/** True when `err` is a {@link CatalogError}. */
export function isCatalogError(err: unknown): err is CatalogError {
  return err instanceof CatalogError;
}

/** True when `err` is a {@link ContractLockError}. */
export function isContractLockError(err: unknown): err is ContractLockError {
  return err instanceof ContractLockError;
}

/** Raised when a grant has a rule that is not `<extension>`, `<extension>.<tool>` or `<extension>.<tool>@<version>`. */
export class GrantError extends OrmuzError {
  readonly code = 'grant_invalid';
}

/** True when `err` is a {@link GrantError}. */
export function isGrantError(err: unknown): err is GrantError {
  return err instanceof GrantError;
}
