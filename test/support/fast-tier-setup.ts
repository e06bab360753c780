// The fast tier's global setup (jest.config.js): no service; the run's scratch directory, and the
// synthesis of the configurations of the CDK app that the run's infrastructure tests read
// (test/infra/configurations.ts: all of them, unless files were chosen), started here in the
// background so that it runs beside the first test files: Node synthesizes them outside jest
// (test/infra/synthesize-configurations.ts) into the scratch directory, and
// test/infra/synthesize.ts waits for the one it needs. With --coverage, the synthesizing
// processes write their V8 coverage for test/support/coverage-report.ts to merge.
import type { ChildProcess } from 'node:child_process';
import { readdirSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Config } from '@jest/types';
import { CONFIGURATIONS, configurationsReadBy } from '../infra/configurations.ts';
import { startBatch } from '../infra/synthesis-store.ts';
import { FAST_CHILD_COVERAGE_DIRECTORY } from './coverage-paths.ts';
import { openRunScratch } from './run-scratch.ts';

const state = globalThis as { museumSynthesis?: ChildProcess };

export default async function fastTierSetup(globalConfig: Config.GlobalConfig): Promise<void> {
  const scratch = await openRunScratch();
  // .ci/run gives both tiers of its run one store (MUSEUM_SYNTHESIS_STORE), so that the system
  // tier's cfn-lint and Apache Velocity suites read the syntheses made here; otherwise the store
  // is this run's own.
  const shared = process.env.MUSEUM_SYNTHESIS_STORE;
  const store = shared ?? join(scratch, 'museum-synthesis');
  // The jest workers start after this, with this environment.
  process.env.MUSEUM_SYNTHESIS_STORE = store;
  if (globalConfig.collectCoverage) {
    const coverage = resolve(globalConfig.rootDir, FAST_CHILD_COVERAGE_DIRECTORY);
    rmSync(coverage, { recursive: true, force: true });
    process.env.MUSEUM_SYNTHESIS_V8_COVERAGE = coverage;
  }
  // In .ci/run's store also those the system tier's files read (cfn-lint, Apache Velocity): this
  // batch's processes have aws-cdk-lib loaded already, a process of the system tier would load it again.
  const names = configurationsReadBy([...infrastructureTestsToRun(globalConfig), ...(shared ? systemTierReaders() : [])]);
  if (names.length > 0) state.museumSynthesis = startBatch(store, names);
}

/** The files outside test/infra/ that read configurations (relative to test/): the system tier's. */
function systemTierReaders(): string[] {
  return Object.values(CONFIGURATIONS)
    .flatMap((configuration) => configuration.readBy)
    .filter((file) => !file.startsWith('infra/'));
}

/** The files of test/infra/ the run may run (relative to test/): those its patterns choose, all when it has none. */
function infrastructureTestsToRun(globalConfig: Config.GlobalConfig): string[] {
  if (globalConfig.listTests) return [];
  const folder = join(globalConfig.rootDir, 'test/infra');
  const files = readdirSync(folder).filter((file) => file.endsWith('.test.ts'));
  const { testPathPatterns } = globalConfig;
  // Tests chosen by what changed or by what a source file is used by: any may be among them.
  const all = !testPathPatterns.isSet() || globalConfig.findRelatedTests || globalConfig.onlyChanged || Boolean(globalConfig.changedSince);
  const matcher = testPathPatterns.toExecutor({ rootDir: globalConfig.rootDir });
  return files.filter((file) => all || matcher.isMatch(join(folder, file))).map((file) => `infra/${file}`);
}
