// fast-check parameters for the property tests against the local API. Every claimed run must run:
// the time limit only stops a run that would otherwise outlast its jest timeout, and stopping it is
// a failure (markInterruptAsFailure), never a pass with fewer cases than claimed. A failure found
// earlier is still reported, with the smallest counterexample shrinking reached by then, and its
// seed (FAST_CHECK_SEED=<seed> replays it).
import type fc from 'fast-check';

/** The jest timeout to give a test that runs `propertyRuns(…, timeLimitMs)`: room for set-up and the report. */
export const jestTimeoutFor = (timeLimitMs: number): number => timeLimitMs + 30_000;

export function propertyRuns(numRuns: number, timeLimitMs: number): fc.Parameters<unknown> {
  const seed = process.env.FAST_CHECK_SEED;
  // eslint-disable-next-line @typescript-eslint/no-deprecated -- the plugin form needs a fast-check major version the project has not moved to
  return { numRuns, interruptAfterTimeLimit: timeLimitMs, markInterruptAsFailure: true, ...(seed ? { seed: Number(seed) } : {}) };
}
