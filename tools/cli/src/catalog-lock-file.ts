/**
 * Reading and writing `catalog.lock.json`, for the `ormuz catalog` commands. The catalog library itself does no file
 * I/O: it computes and checks locks (`lockContracts`, `checkContracts`, `parseContractLock`); this adapter stores them.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { ContractLockError, parseContractLock, type ContractLock } from '@ormuz/catalog';

/** The lock's file name at the repository root. */
export const CONTRACT_LOCK_FILE = 'catalog.lock.json';

/**
 * Reads and checks the lock at `path`. Throws {@link ContractLockError} when the file is missing (run
 * `ormuz catalog lock`), is not JSON, or does not have the lock's shape.
 */
export function readContractLock(path: string): ContractLock {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') {
      throw new ContractLockError(`There is no contract lock at ${path}. Run \`ormuz catalog lock\` and commit it.`);
    }
    throw err;
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new ContractLockError(
      `${path} is not valid JSON (${(err as Error).message}). Regenerate it with \`ormuz catalog lock\`.`,
    );
  }
  return parseContractLock(value, path);
}

/** Writes `lock` to `path` as two-space-indented JSON with a final newline (stable, diff-friendly). */
export function writeContractLock(path: string, lock: ContractLock): void {
  writeFileSync(path, `${JSON.stringify(lock, null, 2)}\n`);
}
