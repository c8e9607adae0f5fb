// Four projects: unit tests beside the code, integration tests against the real NATS and Postgres, end-to-end
// scenarios that start the services as processes, and the nemesis (the chaos run on a NATS cluster of its own, which
// tools/test.mjs runs alone after its two lanes). All run as native ES modules through SWC.
const transform = {
  '^.+\\.ts$': [
    '@swc/jest',
    {
      jsc: {
        parser: { syntax: 'typescript', decorators: true },
        transform: { legacyDecorator: true, decoratorMetadata: true },
        target: 'es2023',
        keepClassNames: true,
      },
      module: { type: 'es6' },
    },
  ],
};
const common = {
  transform,
  extensionsToTreatAsEsm: ['.ts'],
  testEnvironment: 'node',
  moduleNameMapper: {
    '^@ormuz/([a-z-]+)$': '<rootDir>/libs/$1/src/index.ts',
    // Subpath entries of a library (`@ormuz/service-kit/client`): the file of that name in its src/.
    '^@ormuz/([a-z-]+)/([a-z-]+)$': '<rootDir>/libs/$1/src/$2.ts',
    '^(\\.{1,2}/.*)\\.js$': '$1',
  },
};

// Integration and e2e share one pair of test servers: containers where a Docker engine answers, otherwise NATS_URL /
// DATABASE_URL or the local servers (libs/testing/src/jest/global-setup.ts).
const servers = {
  globalSetup: '<rootDir>/libs/testing/src/jest/global-setup.ts',
  globalTeardown: '<rootDir>/libs/testing/src/jest/global-teardown.ts',
};

// Kills nodes of a three-node NATS cluster and replicas of every service, and times their recovery: it wants the
// machine to itself.
const NEMESIS = 'test/crash/chaos.crash.int.spec.ts';

export default {
  // Integration and e2e tests wait on real servers with bounded polls (waitFor: 30 s by default); this bound only
  // catches a test that would otherwise hang.
  testTimeout: 120_000,
  projects: [
    { ...common, displayName: 'unit', testMatch: ['<rootDir>/{libs,services,tools}/*/src/**/*.spec.ts'] },
    {
      ...common,
      ...servers,
      displayName: 'integration',
      testMatch: ['<rootDir>/{libs,services,tools}/*/test/**/*.int.spec.ts', '<rootDir>/test/crash/**/*.int.spec.ts'],
      testPathIgnorePatterns: ['/node_modules/', NEMESIS],
    },
    { ...common, ...servers, displayName: 'nemesis', testMatch: [`<rootDir>/${NEMESIS}`] },
    { ...common, ...servers, displayName: 'e2e', testMatch: ['<rootDir>/test/e2e/**/*.e2e.spec.ts'] },
  ],
};
