// The fast tier's global teardown (jest.config.js): stops the synthesis its setup started if it is
// still running (the run needed no more of it), leaving what it did not finish to whoever reads the
// store next (.ci/run's system tier), then removes the run's scratch directory.
import type { ChildProcess } from 'node:child_process';
import { releaseUnfinished, stopBatch, storeDirectory } from '../infra/synthesis-store.ts';
import { removeRunScratch } from './run-scratch.ts';

const state = globalThis as { museumSynthesis?: ChildProcess };

export default async function fastTierTeardown(): Promise<void> {
  if (state.museumSynthesis) {
    await stopBatch(state.museumSynthesis);
    releaseUnfinished(storeDirectory());
  }
  await removeRunScratch();
}
