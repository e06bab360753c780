// The benchmark's statistics: the ratios and their standard errors that `npm run bench` checks
// against the targets and docs/PERFORMANCE.md quotes.
import { median, medianStandardError, quantile, seededRandom } from '../../bench/support/stats.ts';

describe('bench statistics', () => {
  it('interpolates quantiles between the closest ranks', () => {
    expect(quantile([4, 1, 3, 2], 0.5)).toBe(2.5);
    expect(quantile([1, 2, 3, 4, 5], 0.99)).toBeCloseTo(4.96);
    expect(median([])).toBeNaN();
  });

  it('gives the same standard error on every run for the same samples', () => {
    const samples = Array.from({ length: 60 }, (_, i) => 1.2 + 0.05 * Math.sin(i * 7.3));
    expect(medianStandardError(samples)).toBe(medianStandardError([...samples]));
  });

  it('has no spread for identical samples and a smaller one for more samples', () => {
    expect(medianStandardError([1.1, 1.1, 1.1, 1.1])).toBeCloseTo(0, 12);
    const draw = seededRandom(7);
    const many = Array.from({ length: 400 }, () => 1 + draw());
    const few = many.slice(0, 25);
    expect(medianStandardError(many)).toBeLessThan(medianStandardError(few));
    expect(medianStandardError([1])).toBeNaN();
  });
});
