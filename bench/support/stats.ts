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
