// The fast tier, `npm test` (and plain `npx jest <files>`): every suite that needs no process of its
// own, no browser and no Java, judged by folder so that a new file lands in a tier by where it is:
// test/unit/ and test/infra/ (the synthesized CDK app and the deploy scripts; they may run a short
// bash or git, nothing that serves). Everything else is the system tier (jest.system.config.js).
// The CDK app is synthesized once per configuration per run, by Node outside jest, which the global
// setup starts in the background (test/infra/synthesize.ts); the test files read the assemblies.
//
// Jest runs in native ESM mode (middy 7 and Powertools are ESM-only), with ts-jest transpiling only
// (isolatedModules in tsconfig.json). Node 24 itself loads the global setup with its built-in type
// stripping, hence `erasableSyntaxOnly` in tsconfig.json. Both tiers type-check the whole tree once
// with `tsc --noEmit` first (`npm test`).

/** The fast tier's folders; jest.system.config.js runs every other test file. */
export const FAST_TIER_FOLDERS = ['test/unit', 'test/infra'];

/** @type {import('jest').Config} */
export default {
  testEnvironment: 'node',
  extensionsToTreatAsEsm: ['.ts'],
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  transform: {
    '^.+\\.ts$': ['ts-jest', { useESM: true, diagnostics: false }],
  },
  testMatch: FAST_TIER_FOLDERS.map((folder) => `<rootDir>/${folder}/**/*.test.ts`),
  // The run's scratch directory (TMPDIR), where the synthesis the setup starts writes too: nothing
  // of a run stays in the temporary directory.
  globalSetup: '<rootDir>/test/support/fast-tier-setup.ts',
  globalTeardown: '<rootDir>/test/support/fast-tier-teardown.ts',
  testTimeout: 60_000,
  // jest's transform cache stays with the checkout, not in the system's temporary directory.
  cacheDirectory: '<rootDir>/node_modules/.cache/jest',
  // The fast tier is CPU work (synthesis, property runs, parsers): one worker per core. A worker
  // whose heap has grown past 1 GB is replaced before its next file instead of slowing it down
  // with garbage collection.
  maxWorkers: 2,
  workerIdleMemoryLimit: '1GB',
  // Used with --coverage (both tiers): test/support/coverage-report.ts merges every tier's file
  // with the V8 coverage of the child processes: the synthesis of this tier, and those the system
  // tier starts.
  coverageProvider: 'v8',
  collectCoverageFrom: ['<rootDir>/{functions,lib,bin,scripts}/**/*.ts'],
  coverageReporters: ['json'],
  coverageDirectory: '<rootDir>/coverage/fast',
};
