// One lint configuration for the whole workspace (ESLint flat config).
//
// - typescript-eslint's recommended rules, plus the few type-aware rules that catch real bugs in async code
//   (a forgotten `await` on an append or an ack is a lost or duplicated event). Type information comes from each
//   project's tsconfig.json through the project service.
// - Nx module boundaries, driven by the `scope:*` and `type:*` tags in every project.json: a service never imports
//   another service, contracts depend on nothing, the domain only on contracts, infrastructure never on services.
// - Tests may not be focused or skipped: a skipped test on main is a hidden failure.
// - Every project's package.json declares exactly the packages its runtime code imports (Nx dependency checks).
import js from '@eslint/js';
import { createProjectGraphAsync } from '@nx/devkit';
import nx from '@nx/eslint-plugin';
import jest from 'eslint-plugin-jest';
import { defineConfig } from 'eslint/config';
import jsonc from 'jsonc-eslint-parser';
import tseslint from 'typescript-eslint';

// The boundaries rule reads Nx's cached project graph and silently skips itself when there is none (a fresh clone, a
// plain `eslint .`). Computing it here keeps the rule on for every entry point; it is incremental and takes ~1 s, so
// it needs no Nx daemon left running in the background.
process.env.NX_DAEMON ??= 'false';
await createProjectGraphAsync({ exitOnError: false });

const LIBS = ['type:contracts', 'type:domain', 'type:infra', 'type:testing'];
const SERVICES = ['model-loop', 'policy', 'device-bridge', 'approvals', 'audit'];

const TEST_FILES = ['**/*.spec.ts', '**/test/**/*.ts'];

/** Which projects may import which, by tag. `tests` widens every layer to also reach `type:testing`. */
function boundaries({ tests }) {
  const may = (...tags) => (tests ? [...tags, 'type:testing'] : tags);
  return {
    allow: [],
    // The testing library builds on runtime libraries (the NATS-server launcher of @ormuz/event-log, @ormuz/auth's
    // issuer) whose own tests use it: a cycle through test code only, since no runtime code may import it (below).
    ignoredCircularDependencies: [['@ormuz/testing', '*']],
    depConstraints: [
      // Layers.
      { sourceTag: 'type:contracts', onlyDependOnLibsWithTags: may('type:contracts') },
      { sourceTag: 'type:domain', onlyDependOnLibsWithTags: may('type:contracts') },
      { sourceTag: 'type:infra', onlyDependOnLibsWithTags: may('type:contracts', 'type:domain', 'type:infra') },
      { sourceTag: 'type:testing', notDependOnLibsWithTags: ['type:service'] },
      { sourceTag: 'type:service', onlyDependOnLibsWithTags: LIBS },
      { sourceTag: 'type:tool', onlyDependOnLibsWithTags: LIBS },
      // Nothing may import a benchmark (no layer lists `type:bench`); the services they start are allowed below.
      { sourceTag: 'type:bench', onlyDependOnLibsWithTags: LIBS },
      // Ownership: shared code stays shared; each service (and the CLI) sees only shared code and itself.
      { sourceTag: 'scope:shared', onlyDependOnLibsWithTags: ['scope:shared'] },
      { sourceTag: 'scope:cli', onlyDependOnLibsWithTags: ['scope:shared', 'scope:cli'] },
      { sourceTag: 'scope:bench', onlyDependOnLibsWithTags: ['scope:shared'] },
      ...SERVICES.map((name) => ({
        sourceTag: `scope:${name}`,
        onlyDependOnLibsWithTags: ['scope:shared', `scope:${name}`],
      })),
    ],
  };
}

const nodeGlobals = Object.fromEntries(
  ['process', 'console', 'URL', 'Buffer', 'setTimeout', 'clearTimeout', 'setInterval', 'clearInterval'].map((name) => [
    name,
    'readonly',
  ]),
);

export default defineConfig(
  { ignores: ['**/dist/', '**/node_modules/', '**/coverage/', '.nx/'] },

  js.configs.recommended,
  {
    files: ['**/*.js', '**/*.mjs'],
    languageOptions: { ecmaVersion: 2023, sourceType: 'module', globals: nodeGlobals },
  },

  {
    files: ['**/*.ts'],
    extends: [tseslint.configs.recommended],
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': [
        'error',
        { checksVoidReturn: { arguments: false, attributes: false } },
      ],
      '@typescript-eslint/await-thenable': 'error',
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrorsIgnorePattern: '^_' },
      ],
      // Schema-agnostic infrastructure (migrations, checkpoints) is written against `Kysely<any>`, as kysely documents.
      '@typescript-eslint/no-explicit-any': 'warn',
      // NestJS modules are classes whose body is the decorator.
      '@typescript-eslint/no-extraneous-class': 'off',
    },
  },

  {
    files: ['**/*.ts', '**/*.js', '**/*.mjs'],
    plugins: { '@nx': nx },
    rules: { '@nx/enforce-module-boundaries': ['error', boundaries({ tests: false })] },
  },
  {
    // The benchmarks start the policy and device-bridge services in-process, as the e2e tests do. Nx forbids any
    // import of an application outright (before the tag constraints are read), so these two imports are allowed here,
    // in the benchmarks workspace only; everywhere else a service stays unimportable.
    files: ['tools/benches/**/*.ts'],
    rules: {
      '@nx/enforce-module-boundaries': [
        'error',
        { ...boundaries({ tests: false }), allow: ['@ormuz/policy', '@ormuz/device-bridge'] },
      ],
    },
  },
  {
    // Tests of any project may use the testing library; production code below the services may not.
    files: TEST_FILES,
    rules: { '@nx/enforce-module-boundaries': ['error', boundaries({ tests: true })] },
  },

  {
    // A project's `dependencies` name exactly what its runtime code imports: a missing one works only by hoisting, an
    // unused one ships for nothing. "Runtime code" is the build target's inputs, nx.json's `production` (no specs, no
    // test/ folder, no fixtures), so test-only packages belong in devDependencies, which this rule does not read.
    // Versions must admit the installed one.
    files: ['**/package.json'],
    languageOptions: { parser: jsonc },
    plugins: { '@nx': nx },
    rules: {
      '@nx/dependency-checks': [
        'error',
        { checkMissingDependencies: true, checkObsoleteDependencies: true, checkVersionMismatches: true },
      ],
    },
  },

  {
    files: TEST_FILES,
    plugins: { jest },
    languageOptions: { globals: jest.environments.globals.globals },
    rules: {
      'jest/no-disabled-tests': 'error',
      'jest/no-focused-tests': 'error',
      'jest/no-identical-title': 'error',
      'jest/no-commented-out-tests': 'error',
      'jest/valid-expect': 'error',
    },
  },
);
