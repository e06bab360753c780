// Before each system-tier test file (jest.system.config.js, setupFiles): the Node processes the
// file starts write their V8 coverage into the tier's folder (test/support/global-setup.ts). Set in
// the file's own `process.env`, which every suite starts its processes with, and not in the jest
// worker's environment, where the worker itself would write one at exit too.
import { CHILD_COVERAGE_VARIABLE } from './coverage-paths.ts';

const directory = process.env[CHILD_COVERAGE_VARIABLE];
if (directory) process.env.NODE_V8_COVERAGE = directory;
