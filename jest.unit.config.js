// `npm run test:unit`: only test/unit/, without the global setup (no DynamoDB Local, no local
// API), so the loop takes seconds. `npm test` runs these files too, with everything else.
import base from './jest.config.js';

const { globalSetup: _setup, globalTeardown: _teardown, ...withoutServices } = base;

/** @type {import('jest').Config} */
export default {
  ...withoutServices,
  testMatch: ['<rootDir>/test/unit/**/*.test.ts'],
  testTimeout: 30_000,
};
