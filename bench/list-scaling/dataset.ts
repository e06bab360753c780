// Events for the list-scaling tables: a fixed number inside the default window (today + 7 days)
// and the rest outside it, spread the way a museum's calendar is: over two years either side,
// with a good share in the window's own month and on the days just before and after it, where
// an index read that is not bounded by the window would pay for them.
import { randomUUID } from 'node:crypto';
import { addDays } from '../../functions/events/calendar-dates.ts';
import type { SpecialEvent } from '../../functions/events/event-schema.ts';
import { LIMITS } from '../../functions/events/limits.ts';
import { seededRandom } from '../support/stats.ts';

export interface Window {
  startDate: string;
  endDate: string;
}

export function defaultWindow(today: string): Window {
  return { startDate: today, endDate: addDays(today, LIMITS.defaultRangeDays) };
}

const TITLES = ['Evening', 'Curator', 'Family', 'Members', 'Late', 'Sketching', 'Gallery', 'Conservation', 'Silent', 'Festival'];
const SUBJECTS = ['Tour', 'Talk', 'Workshop', 'Concert', 'Screening', 'Lecture', 'Preview', 'Reading', 'Walk', 'Studio'];
const THEMES = ['Impressionism', 'Bronze Age', 'Modern Design', 'Textiles', 'Photography', 'Ceramics', 'Maps', 'Egypt', 'Prints', 'Jazz'];

export interface Calendar {
  inside: SpecialEvent[];
  outside: SpecialEvent[];
}

/** `total` events, `insideCount` of them with at least one date in `window`, the others with none. */
export function buildCalendar(total: number, insideCount: number, window: Window, seed: number): Calendar {
  const next = seededRandom(seed); // the same calendar on every run
  const pick = <T>(list: readonly T[]) => list[Math.floor(next() * list.length)] as T;
  const between = (from: number, to: number) => from + Math.floor(next() * (to - from + 1));
  const inWindow = (date: string) => date >= window.startDate && date <= window.endDate;
  const name = () => `${pick(TITLES)} ${pick(SUBJECTS)}: ${pick(THEMES)} ${between(1, 999)}`;

  /** One date, a run of consecutive days, or a weekly series, starting at `anchor`. */
  const datesFrom = (anchor: string) => {
    const shape = next();
    if (shape < 0.5) return [anchor];
    if (shape < 0.8) return Array.from({ length: between(2, 4) }, (_, i) => addDays(anchor, i));
    return Array.from({ length: between(2, 6) }, (_, i) => addDays(anchor, 7 * i));
  };
  const monthStart = `${window.startDate.slice(0, 7)}-01`;
  const offsetToMonthStart = -Math.round((Date.parse(window.startDate) - Date.parse(monthStart)) / 86_400_000);
  /** 40% near the window (its month and the weeks around it), the rest over two years either side. */
  const outsideAnchor = () =>
    next() < 0.4
      ? addDays(window.startDate, between(Math.min(offsetToMonthStart, -14), 45))
      : addDays(window.startDate, between(-730, 730));

  const event = (dates: string[]): SpecialEvent => ({
    eventId: randomUUID(),
    name: name(),
    location: `Gallery ${between(1, 40)}`,
    eventDescription: 'Seats are limited; the event starts at the main entrance. Accessible entrance on the east side.',
    dates: [...new Set(dates)].sort(),
    price: between(0, 6000) / 100,
  });

  const inside: SpecialEvent[] = [];
  while (inside.length < insideCount) {
    const dates = datesFrom(addDays(window.startDate, between(-3, LIMITS.defaultRangeDays)));
    if (dates.some(inWindow)) inside.push(event(dates));
  }
  const outside: SpecialEvent[] = [];
  while (outside.length < total - insideCount) {
    const dates = datesFrom(outsideAnchor());
    if (!dates.some(inWindow)) outside.push(event(dates));
  }
  return { inside, outside };
}

/** How the outside events fall relative to the window: evidence that the table is not gamed. */
export function describeCalendar(calendar: Calendar, window: Window) {
  const month = window.startDate.slice(0, 7);
  const endMonth = window.endDate.slice(0, 7);
  const dates = calendar.outside.flatMap((event) => event.dates);
  const inWindowMonths = dates.filter((date) => date.startsWith(month) || date.startsWith(endMonth)).length;
  const withinTwoWeeks = dates.filter((date) => date >= addDays(window.startDate, -14) && date <= addDays(window.endDate, 14)).length;
  return {
    events: calendar.inside.length + calendar.outside.length,
    insideWindow: calendar.inside.length,
    outsideDates: dates.length,
    outsideDatesInWindowMonths: inWindowMonths,
    outsideDatesWithinTwoWeeksOfWindow: withinTwoWeeks,
    distinctOutsideMonths: new Set(dates.map((date) => date.slice(0, 7))).size,
  };
}
