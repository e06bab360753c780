// One scratch directory per test run (either tier): every temporary file of the tests, of the
// processes they start and of the jest workers (forked after the global setup, with its
// environment) lands under it, and the global teardown removes it, so a run leaves nothing in the
// temporary directory (.ci/run checks).
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const state = globalThis as { museumTestScratch?: string };

/** Makes the run's scratch directory and points TMPDIR at it; returns it. */
export async function openRunScratch(): Promise<string> {
  const scratch = await mkdtemp(join(tmpdir(), 'museum-test-run-'));
  process.env.TMPDIR = scratch;
  state.museumTestScratch = scratch;
  return scratch;
}

export async function removeRunScratch(): Promise<void> {
  if (state.museumTestScratch) await rm(state.museumTestScratch, { recursive: true, force: true });
}
