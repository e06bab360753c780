// The system tier, `npm run test:system`: every test file outside the fast tier's folders
// (jest.config.js), so that a new folder of tests lands here. Its global setup starts DynamoDB
// Local (Java) and the local API twice; suites start processes of their own (the local run, the
// CLIs, cfn-lint, Apache Velocity, chromium) and load runs.
import fast, { FAST_TIER_FOLDERS } from './jest.config.js';

/** @type {import('jest').Config} */
export default {
  ...fast,
  testMatch: ['<rootDir>/test/**/*.test.ts'],
  testPathIgnorePatterns: ['/node_modules/', ...FAST_TIER_FOLDERS.map((folder) => `<rootDir>/${folder}/`)],
  globalSetup: '<rootDir>/test/support/global-setup.ts',
  globalTeardown: '<rootDir>/test/support/global-teardown.ts',
  setupFiles: ['<rootDir>/test/support/child-coverage.ts', '<rootDir>/test/support/resending-fetch.ts'],
  // Most suites wait on HTTP, DynamoDB Local and child processes, not on the CPU: three workers on
  // two cores keep the cores busy. Every suite already holds with others beside it: they share the
  // one local API and DynamoDB Local through their own keys and years, and the ones that need a
  // server or a data directory of their own start it.
  maxWorkers: 3,
  coverageDirectory: '<rootDir>/coverage/system',
  testSequencer: '<rootDir>/test/support/longest-first-sequencer.ts',
};
