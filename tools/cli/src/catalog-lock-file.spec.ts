import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isContractLockError, loadShippedCatalog, lockContracts } from '@ormuz/catalog';
import { readContractLock, writeContractLock } from './catalog-lock-file.js';

describe('the contract lock file', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'ormuz-catalog-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('round-trips through write and read', () => {
    const lock = lockContracts(loadShippedCatalog());
    const path = join(dir, 'catalog.lock.json');
    writeContractLock(path, lock);
    expect(readContractLock(path)).toEqual(lock);
    expect(readFileSync(path, 'utf8').endsWith('}\n')).toBe(true);
  });

  it('says to run `ormuz catalog lock` when the file is missing', () => {
    expect(() => readContractLock(join(dir, 'missing.json'))).toThrow(/Run `ormuz catalog lock`/);
  });

  it('refuses a file that is not JSON, telling to regenerate it', () => {
    const path = join(dir, 'catalog.lock.json');
    writeFileSync(path, '{ nope');
    let caught: unknown;
    try {
      readContractLock(path);
    } catch (err) {
      caught = err;
    }
    expect(isContractLockError(caught)).toBe(true);
    expect((caught as Error).message).toMatch(/Regenerate it with `ormuz catalog lock`/);
  });
});
