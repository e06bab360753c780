// Jest runs in native ESM mode (middy 7 and Powertools are ESM-only), with ts-jest
// transpiling only (isolatedModules in tsconfig.json). Node 24 itself loads the global setup with
// its built-in type stripping, hence `erasableSyntaxOnly` in tsconfig.json. `npm test` type-checks the whole tree once with `tsc --noEmit` first.
/** @type {import('jest').Config} */
export default {
  testEnvironment: 'node',
  extensionsToTreatAsEsm: ['.ts'],
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  transform: {
    '^.+\\.ts$': ['ts-jest', { useESM: true, diagnostics: false }],
  },
  testMatch: ['<rootDir>/test/**/*.test.ts'],
  globalSetup: '<rootDir>/test/support/global-setup.ts',
  globalTeardown: '<rootDir>/test/support/global-teardown.ts',
  testTimeout: 60_000,
  // jest's transform cache stays with the checkout, not in the system's temporary directory.
  cacheDirectory: '<rootDir>/node_modules/.cache/jest',
  // Most suites wait on HTTP, DynamoDB Local and child processes, not on the CPU: three workers on
  // two cores (jest's default is cores - 1, which on two cores runs every file in one process)
  // keep the cores busy. Every suite already holds with others beside it: they share the one
  // local API and DynamoDB Local through their own keys and years, and the ones that need a
  // server or a data directory of their own start it. A worker whose heap has grown past 1 GB
  // (aws-cdk-lib loaded by each infra file) is replaced before its next file instead of slowing
  // it down with garbage collection.
  maxWorkers: 3,
  workerIdleMemoryLimit: '1GB',
  // Used when run with --coverage (npm test): test/support/coverage-report.ts merges this with the
  // local API child process's coverage and prints the figure.
  coverageProvider: 'v8',
  collectCoverageFrom: ['<rootDir>/{functions,lib,bin,scripts}/**/*.ts'],
  coverageReporters: ['json'],
};
