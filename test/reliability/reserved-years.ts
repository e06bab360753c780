// Years only the reliability tests write to. privateYear() (test/support/api-client.ts) hands
// out 2100-9899 and the other suites use the present and 2031, so nothing they list can see
// the events created here, and the property tests below can list their own years exactly.
export const RESERVED_YEARS = {
  /** One year per run of the list property, 9900-9979. */
  listProperty: { first: 9900, count: 80 },
  /** Events that are created, read, patched and deleted but never listed by year. */
  scratch: 9980,
  /** The concurrency tests, which read the date index of their own year. */
  concurrency: 9981,
  /** Events written through the fault proxy. */
  faults: 9982,
  /** Events of a whole (leap) year of dates, and the years they move to. */
  largeEvents: 9984,
  /** Large events written through the fault proxy: the store directly (9988-9989), the API (9987). */
  largeFaults: 9988,
  largeFaultsApi: 9987,
  /** One year per run of the large-event property, 9993-9998. */
  largeProperty: { first: 9993, count: 6 },
  /**
   * Events with dates in more months than one transaction can write (one date a month for 5-15
   * years): 1910-1929 (large-events.test.ts) and 1930-1939 (faults.test.ts), before anything
   * else writes (the fuzz and edge tests use 1900-1901).
   */
  manyMonths: 1910,
  /** Every date a fuzzed request could get stored with. */
  fuzz: 9990,
} as const;

/** Hands out the list-property years in turn; runs clean up after themselves, so wrapping is safe. */
export function listPropertyYears(): () => number {
  let next = 0;
  return () => RESERVED_YEARS.listProperty.first + (next++ % RESERVED_YEARS.listProperty.count);
}

/** `YYYY-MM-DD` of the `dayOfYear`-th day (0-based) of `year`. */
export function dayOfYear(year: number, dayIndex: number): string {
  return new Date(Date.UTC(year, 0, 1 + dayIndex)).toISOString().slice(0, 10);
}
