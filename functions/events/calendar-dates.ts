// Calendar dates as ISO `YYYY-MM-DD` strings. Plain strings sort in date order, so they serve
// directly as DynamoDB sort-key prefixes; arithmetic goes through UTC midnight to avoid DST.

const DAY_MS = 86_400_000;

/** Year bounds keep `Date.UTC` exact (it maps years 0-99 to 1900-1999). */
export const MIN_YEAR = 1900;
export const MAX_YEAR = 9999;
export const FIRST_DATE = `${MIN_YEAR}-01-01`;
export const LAST_DATE = `${MAX_YEAR}-12-31`;

/** `YYYY-MM-DD`, years 1900-9999, months 01-12, days 01-31: also the OpenAPI pattern ([0-9], not \d, which in Python matches any script's digits). */
export const CALENDAR_DATE_PATTERN = '^(19[0-9]{2}|[2-9][0-9]{3})-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])$';
const ISO_DATE = new RegExp(CALENDAR_DATE_PATTERN);

/** True for a real calendar date written as `YYYY-MM-DD` (2026-02-30 is not one). */
export function isCalendarDate(value: string): boolean {
  const match = ISO_DATE.exec(value);
  if (!match) return false;
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  return day <= new Date(Date.UTC(year, month, 0)).getUTCDate();
}

/**
 * `date` plus `days`, kept inside the supported calendar (1900-01-01 to 9999-12-31): past its
 * ends the result is the end itself, never a year 10000 that no rule downstream can read.
 */
export function addDays(date: string, days: number): string {
  const time = Date.parse(`${date}T00:00:00Z`) + days * DAY_MS;
  if (Number.isNaN(time)) throw new RangeError(`Not a calendar date: ${date}`);
  if (time < Date.parse(`${FIRST_DATE}T00:00:00Z`)) return FIRST_DATE;
  if (time > Date.parse(`${LAST_DATE}T00:00:00Z`)) return LAST_DATE;
  return new Date(time).toISOString().slice(0, 10);
}

/** Whole days from `from` to `to` (negative when `to` is earlier). */
export function daysBetween(from: string, to: string): number {
  const days = Math.round((Date.parse(`${to}T00:00:00Z`) - Date.parse(`${from}T00:00:00Z`)) / DAY_MS);
  if (Number.isNaN(days)) throw new RangeError(`Not calendar dates: ${from}, ${to}`);
  return days;
}

/** Today's date in an IANA time zone: the museum's "today", not the server's. */
export function todayIn(timeZone: string, now: Date = new Date()): string {
  // UTC needs no time-zone rules: skipping Intl spares a cold start ICU's set-up (~10 ms of CPU).
  if (timeZone === 'UTC') return now.toISOString().slice(0, 10);
  return dateFormatter(timeZone).format(now);
}

export function isTimeZone(timeZone: string): boolean {
  if (timeZone === 'UTC') return true;
  try {
    dateFormatter(timeZone);
    return true;
  } catch {
    return false;
  }
}

const dateFormatters = new Map<string, Intl.DateTimeFormat>();

/** One formatter per time zone, built on first use; en-CA formats as YYYY-MM-DD. */
function dateFormatter(timeZone: string): Intl.DateTimeFormat {
  let formatter = dateFormatters.get(timeZone);
  if (!formatter) {
    formatter = new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' });
    dateFormatters.set(timeZone, formatter);
  }
  return formatter;
}

/** The months (`YYYY-MM`) that a date range touches, in order. */
export function monthsBetween(startDate: string, endDate: string): string[] {
  const months: string[] = [];
  let [year, month] = [Number(startDate.slice(0, 4)), Number(startDate.slice(5, 7))];
  const last = endDate.slice(0, 7);
  for (;;) {
    const current = `${String(year).padStart(4, '0')}-${String(month).padStart(2, '0')}`;
    months.push(current);
    if (current >= last) return months;
    month += 1;
    if (month > 12) [year, month] = [year + 1, 1];
  }
}

/** Sorted, without duplicates. */
export function normaliseDates(dates: string[]): string[] {
  return [...new Set(dates)].sort();
}
