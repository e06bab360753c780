// Summary statistics for timing samples.

/** The q-quantile (0..1) by linear interpolation between the closest ranks. */
export function quantile(samples: readonly number[], q: number): number {
  if (samples.length === 0) return Number.NaN;
  const sorted = [...samples].sort((a, b) => a - b);
  const position = (sorted.length - 1) * q;
  const below = Math.floor(position);
  const above = Math.ceil(position);
  const low = sorted[below] as number;
  const high = sorted[above] as number;
  return low + (high - low) * (position - below);
}

export const median = (samples: readonly number[]) => quantile(samples, 0.5);

/** mulberry32: a small seeded generator, so every run draws the same numbers. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * Standard error of the median by bootstrap: the spread of the medians of `resamples` samples
 * drawn with replacement. It says how far a rerun's median may land from this one.
 */
export function medianStandardError(samples: readonly number[], resamples = 1000): number {
  if (samples.length < 2) return Number.NaN;
  const next = seededRandom(samples.length);
  const medians = Array.from({ length: resamples }, () =>
    median(Array.from(samples, () => samples[Math.floor(next() * samples.length)] as number)),
  );
  const mean = medians.reduce((sum, value) => sum + value, 0) / resamples;
  return Math.sqrt(medians.reduce((sum, value) => sum + (value - mean) ** 2, 0) / (resamples - 1));
}

export interface LatencySummary {
  count: number;
  p50: number;
  p99: number;
  min: number;
  max: number;
}

export function summarise(samples: readonly number[]): LatencySummary {
  return {
    count: samples.length,
    p50: round(quantile(samples, 0.5)),
    p99: round(quantile(samples, 0.99)),
    min: round(Math.min(...samples)),
    max: round(Math.max(...samples)),
  };
}

/** Three decimals: microseconds when the unit is milliseconds. */
export function round(value: number, decimals = 3): number {
  const factor = 10 ** decimals;
  return Math.round(value * factor) / factor;
}

export interface PairedDifference {
  /** Median of the paired differences. */
  median: number;
  /** Percentile-bootstrap interval of that median (resampling the pairs, so each keeps its own round). */
  low: number;
  high: number;
  confidence: number;
}

/**
 * The median of paired differences (one per round, B minus A measured back to back) with a
 * percentile-bootstrap confidence interval: pairing cancels what the machine's load does to both.
 */
export function pairedDifference(differences: readonly number[], confidence = 0.95, resamples = 4000): PairedDifference {
  const next = seededRandom(differences.length * 7919 + 1);
  const medians = Array.from({ length: resamples }, () =>
    median(Array.from(differences, () => differences[Math.floor(next() * differences.length)] as number)),
  );
  const tail = (1 - confidence) / 2;
  return { median: median(differences), low: quantile(medians, tail), high: quantile(medians, 1 - tail), confidence };
}
