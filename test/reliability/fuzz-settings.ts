// How big the fuzz runs are. `npm run test:system` runs fixed-seed slices (the defaults each suite passes);
// `npm run fuzz` runs the same suites longer, through these variables:
//   MUSEUM_FUZZ_RUNS       bad requests of the HTTP fuzz (fuzz.test.ts)
//   MUSEUM_AGREEMENT_RUNS  requests per kind of the document agreement (document-agreement.test.ts)
//   MUSEUM_FUZZ_SEED       a number, or `random` (printed in the test's name, to replay it)

/** The count from `variable`, or `slice` when it is unset. */
export function fuzzCount(variable: 'MUSEUM_FUZZ_RUNS' | 'MUSEUM_AGREEMENT_RUNS', slice: number): number {
  const raw = process.env[variable];
  if (raw === undefined || raw === '') return slice;
  const count = Number(raw);
  if (!Number.isSafeInteger(count) || count < 1) throw new Error(`${variable} must be a positive integer, not "${raw}"`);
  return count;
}

/** The seed from MUSEUM_FUZZ_SEED (`random`: a new one), or `slice` when it is unset. */
export function fuzzSeed(slice: number): number {
  const raw = process.env.MUSEUM_FUZZ_SEED;
  if (raw === undefined || raw === '') return slice;
  if (raw === 'random') return Date.now() % 2 ** 31;
  const seed = Number(raw);
  if (!Number.isSafeInteger(seed)) throw new Error(`MUSEUM_FUZZ_SEED must be an integer or "random", not "${raw}"`);
  return seed;
}

/** True when a variable asks for more than the slice: the suites then print their report. */
export const longFuzzRun = Boolean(process.env.MUSEUM_FUZZ_RUNS || process.env.MUSEUM_AGREEMENT_RUNS);
