import type { Command } from 'commander';
import { join } from 'node:path';
import {
  checkContracts,
  formatLintFindings,
  hasLintErrors,
  lintCatalog,
  loadShippedCatalog,
  lockContracts,
} from '@ormuz/catalog';
import { CONTRACT_LOCK_FILE, readContractLock, writeContractLock } from '../catalog-lock-file.js';
import type { CliContext } from '../context.js';
import { REPO_ROOT } from '../services.js';

const DEFAULT_LOCK = join(REPO_ROOT, CONTRACT_LOCK_FILE);

/**
 * `ormuz catalog lint | check | lock`: the shipped catalog's writing lint, and the committed lock of its contract
 * hashes. `lint` and `check` exit 1 on errors, so CI can run both.
 */
export function registerCatalogCommands(program: Command, ctx: () => CliContext): void {
  const catalog = program.command('catalog').description("lint the tool catalog and guard its tools' contracts");

  catalog
    .command('lint')
    .description('report descriptions, argument names and output contracts that mislead a model (exit 1 on errors)')
    .action(() => {
      const findings = lintCatalog(loadShippedCatalog());
      const errors = findings.filter((f) => f.severity === 'error').length;
      const warnings = findings.length - errors;
      ctx().print({ findings, errors, warnings }, () =>
        [formatLintFindings(findings), `catalog lint: ${errors} error(s), ${warnings} warning(s)`]
          .filter(Boolean)
          .join('\n'),
      );
      if (hasLintErrors(findings)) process.exitCode = 1;
    });

  catalog
    .command('check')
    .description(`compare every tool version's contract hash with ${CONTRACT_LOCK_FILE} (exit 1 on any difference)`)
    .option('--lock <path>', `lock file (default: ${CONTRACT_LOCK_FILE} at the repository root)`, DEFAULT_LOCK)
    .action((o: { lock: string }) => {
      const loaded = loadShippedCatalog();
      const drifts = checkContracts(loaded, readContractLock(o.lock));
      const versions = loaded.entries().length;
      ctx().print({ ok: drifts.length === 0, lock: o.lock, drifts }, () =>
        drifts.length === 0
          ? `${o.lock} matches the catalog (${versions} tool versions).`
          : [
              ...drifts.map((d) => `${d.kind.padEnd(8)} ${d.tool}@${d.version}  ${d.message}`),
              `catalog check: ${drifts.length} difference(s)`,
            ].join('\n'),
      );
      if (drifts.length > 0) process.exitCode = 1;
    });

  catalog
    .command('lock')
    .description(`write every tool version's contract hash to ${CONTRACT_LOCK_FILE}; commit it with the change`)
    .option('--lock <path>', `lock file (default: ${CONTRACT_LOCK_FILE} at the repository root)`, DEFAULT_LOCK)
    .action((o: { lock: string }) => {
      const lock = lockContracts(loadShippedCatalog());
      writeContractLock(o.lock, lock);
      const versions = Object.values(lock).reduce((n, v) => n + Object.keys(v).length, 0);
      ctx().print(
        { lock: o.lock, tools: Object.keys(lock).length, versions },
        () => `wrote ${o.lock}: ${versions} tool versions`,
      );
    });
}
