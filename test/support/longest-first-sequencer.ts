// The system tier's order on a checkout jest has not run before (CI's fresh clone): the suites
// that take longest first. Jest's own sequencer orders by the durations it cached on an earlier
// run, and without them by file size, which put a 2.5-minute suite of compressed retry waits
// among the last: the run then waited for it with the other workers idle. With cached durations
// (a developer's second run) jest's order stands.
import { relative } from 'node:path';
import testSequencer from '@jest/test-sequencer';

// Node imports the package's ES module build (build/index.mjs), whose default export is the class;
// its types describe the CommonJS build, where the class is the `default` property.
const Sequencer = testSequencer as unknown as typeof testSequencer.default;
type Test = Parameters<InstanceType<typeof Sequencer>['sort']>[0][number];

/**
 * The longest suites, longest first (seconds of one suite on 2 idle cores, from a fresh-clone
 * run's `--json` durations). Stale figures only reorder the run; every suite still runs.
 */
const LONGEST_SUITES = [
  'test/e2e/webhook-retries.test.ts', // 150: the compressed 12-attempt schedule and a restart
  'test/e2e/local-run-safety.test.ts', // 100: real npm starts, signals, kill -9
  'test/e2e/users-cli.test.ts', // 85
  'test/e2e/local-api-lifecycle.test.ts', // 75
  'test/reliability/properties.test.ts', // 75
  'test/infra-engines/cfn-lint.test.ts', // 60
  'test/e2e/local-run-watch.test.ts', // 55
  'test/e2e/local-run-terminal.test.ts', // 40
  'test/reliability/faults.test.ts', // 40
  'test/e2e/change-feed.test.ts', // 35
];

export default class LongestFirstSequencer extends Sequencer {
  override async sort(tests: Test[]): Promise<Test[]> {
    const ordered = await super.sort(tests);
    if (ordered.some((test) => test.duration != null)) return ordered;
    const rank = (test: Test) => {
      const index = LONGEST_SUITES.indexOf(relative(test.context.config.rootDir, test.path));
      return index === -1 ? LONGEST_SUITES.length : index;
    };
    return [...ordered].sort((a, b) => rank(a) - rank(b));
  }
}
