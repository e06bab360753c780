// Where each tier's coverage lands (jest.config.js and jest.system.config.js name the same
// folders), read by test/support/coverage-report.ts.
/** Jest's own coverage, one folder per tier, each with its coverage-final.json. */
export const TIER_COVERAGE_DIRECTORIES = { fast: 'coverage/fast', system: 'coverage/system' } as const;
/** The V8 coverage of the Node processes the system tier starts (NODE_V8_COVERAGE). */
export const CHILD_COVERAGE_DIRECTORY = 'coverage/child-processes-v8';
/** Names that directory to the system tier's jest workers, for what they start (test/support/child-coverage.ts). */
export const CHILD_COVERAGE_VARIABLE = 'MUSEUM_CHILD_V8_COVERAGE';
/** The V8 coverage of the processes that synthesize the CDK app for the fast tier (test/support/fast-tier-setup.ts). */
export const FAST_CHILD_COVERAGE_DIRECTORY = 'coverage/fast-child-processes-v8';
