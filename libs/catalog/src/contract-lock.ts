/**
 * Contract hashes and the committed lock of them: a tool's arguments, output, effect, risk level and executor cannot
 * change without a new version.
 */
import { canonicalJson, sha256Hex } from '@ormuz/contracts';
import type { Catalog } from './catalog.js';
import { ContractLockError } from './errors.js';
import { DEFAULT_TOOL_EXECUTOR, executorOf, type ToolDefinition } from './tool-definition.js';

/**
 * Hex SHA-256 of the canonical JSON of what a caller depends on: each parameter's schema, controller and
 * optionality; the combination groups; the output schema; the effect; the risk level; the executor (who runs a
 * call is a promise to the caller: a device's hands or the platform's). Wording is not contract: the tool's, each
 * parameter's and the output's descriptions, the combination messages and the owner summary are left out, as are
 * `timeout_ms` and `skills`. Annotations inside the JSON Schemas themselves (e.g. `examples`) do count.
 *
 * The default executor (`device`, also when declared explicitly) is hashed as its absence, so every hash locked
 * before tools declared an executor still holds for the tools that run on the device.
 * Throws when the definition holds values JSON cannot carry (the catalog refuses such a definition at load).
 */
export function contractHash(definition: ToolDefinition): string {
  const executor = executorOf(definition);
  const parameters = Object.fromEntries(
    Object.entries(definition.parameters).map(([name, p]) => [
      name,
      { schema: p.schema, controller: p.controller, optional: p.optional === true },
    ]),
  );
  return sha256Hex(
    canonicalJson({
      parameters,
      combinations: (definition.combinations ?? []).map((rule) => rule.oneOf),
      output: definition.output?.schema ?? null,
      effect: definition.effect,
      risk_level: definition.risk_level,
      ...(executor === DEFAULT_TOOL_EXECUTOR ? {} : { executor }),
    }),
  );
}

/** The committed lock: tool name → contract version (as a decimal string) → contract hash. */
export type ContractLock = Readonly<Record<string, Readonly<Record<string, string>>>>;

/** The lock for every version in `catalog`, names sorted, versions ascending. */
export function lockContracts(catalog: Catalog): ContractLock {
  const lock: Record<string, Record<string, string>> = {};
  for (const entry of catalog.entries()) {
    (lock[entry.name] ??= {})[String(entry.version)] = entry.contractHash;
  }
  return lock;
}

/** One difference between a catalog and its lock, with what to do about it. */
export type ContractDrift =
  | {
      /** The version's contract changed in place. */
      readonly kind: 'changed';
      readonly tool: string;
      readonly version: number;
      readonly locked: string;
      readonly actual: string;
      readonly message: string;
    }
  | {
      /** A version the lock does not know yet. */
      readonly kind: 'unlocked';
      readonly tool: string;
      readonly version: number;
      readonly actual: string;
      readonly message: string;
    }
  | {
      /** A locked version that is no longer in the catalog. */
      readonly kind: 'removed';
      readonly tool: string;
      readonly version: number;
      readonly locked: string;
      readonly message: string;
    };

/**
 * Every difference between `catalog` and `lock`: a version whose contract hash differs (a contract change without
 * a new version), a version missing from the lock, and a locked version no longer loaded. Empty when they agree.
 */
export function checkContracts(catalog: Catalog, lock: ContractLock): ContractDrift[] {
  const drifts: ContractDrift[] = [];
  for (const entry of catalog.entries()) {
    const { name: tool, version, contractHash: actual } = entry;
    const locked = Object.hasOwn(lock, tool) ? lock[tool]![String(version)] : undefined;
    if (locked === undefined) {
      drifts.push({
        kind: 'unlocked',
        tool,
        version,
        actual,
        message:
          `${tool}@${version} is not in the lock. If it is a new version, run \`ormuz catalog lock\` and commit ` +
          'catalog.lock.json with it.',
      });
    } else if (locked !== actual) {
      const next = Math.max(...catalog.versions(tool)) + 1;
      drifts.push({
        kind: 'changed',
        tool,
        version,
        locked,
        actual,
        message:
          `${tool}@${version} changed its contract (parameters, combinations, output, effect, risk level or executor) without ` +
          `a new version: the lock has ${locked.slice(0, 12)}…, the catalog ${actual.slice(0, 12)}…. Grants and ` +
          `approvals pinned to version ${version} would silently get the new contract. Restore version ${version} ` +
          `as it was and publish the change as version ${next}, then run \`ormuz catalog lock\`.`,
      });
    }
  }
  for (const [tool, versions] of Object.entries(lock)) {
    for (const [version, locked] of Object.entries(versions)) {
      if (catalog.resolve(tool, Number(version))) continue;
      drifts.push({
        kind: 'removed',
        tool,
        version: Number(version),
        locked,
        message:
          `${tool}@${version} is in the lock but not in the catalog; grants and approvals pinned to it will be ` +
          'refused. Restore it, or if retiring it is intended, run `ormuz catalog lock` and commit the lock.',
      });
    }
  }
  return drifts;
}

const VERSION_KEY = /^[1-9][0-9]*$/;
const HASH = /^[0-9a-f]{64}$/;

/** Checks that `value` (parsed JSON) has the lock's shape. Throws {@link ContractLockError} naming the bad entry. */
export function parseContractLock(value: unknown, source = 'catalog.lock.json'): ContractLock {
  const refuse = (what: string): never => {
    throw new ContractLockError(
      `${source} is not a contract lock: ${what}. Regenerate it with \`ormuz catalog lock\` rather than editing it.`,
    );
  };
  if (value === null || typeof value !== 'object' || Array.isArray(value)) refuse('it must be a JSON object');
  const lock: Record<string, Record<string, string>> = {};
  for (const [tool, versions] of Object.entries(value as Record<string, unknown>)) {
    if (versions === null || typeof versions !== 'object' || Array.isArray(versions)) {
      refuse(`"${tool}" must map versions to hashes`);
    }
    const byVersion: Record<string, string> = {};
    for (const [version, hash] of Object.entries(versions as Record<string, unknown>)) {
      if (!VERSION_KEY.test(version)) refuse(`"${tool}" has version "${version}", which is not a positive integer`);
      if (typeof hash !== 'string' || !HASH.test(hash)) refuse(`"${tool}"@${version} is not a hex SHA-256`);
      byVersion[version] = hash as string;
    }
    lock[tool] = byVersion;
  }
  return lock;
}
