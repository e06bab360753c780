import { addDays, daysBetween, isCalendarDate, monthsBetween, normaliseDates, todayIn } from '../../functions/events/calendar-dates.ts';

describe('calendar dates', () => {
  test.each(['2026-02-28', '2024-02-29', '2000-02-29', '2026-12-31', '1900-01-01', '9999-12-31'])('%s is a calendar date', (date) => {
    expect(isCalendarDate(date)).toBe(true);
  });

  test.each([
    '2026-02-30',
    '2026-02-29',
    '1900-02-29',
    '2026-13-01',
    '2026-00-10',
    '2026-01-00',
    '2026-1-01',
    '26-01-01',
    '2026-01-01T00:00:00Z',
    ' 2026-01-01',
    '1899-12-31',
    '',
  ])('%j is rejected', (date) => {
    expect(isCalendarDate(date)).toBe(false);
  });

  test('adding days crosses months, years and leap days', () => {
    expect(addDays('2026-12-28', 7)).toBe('2027-01-04');
    expect(addDays('2028-02-27', 2)).toBe('2028-02-29');
    expect(daysBetween('2026-01-01', '2027-01-01')).toBe(365);
    expect(daysBetween('2026-01-02', '2026-01-01')).toBe(-1);
  });

  test('the months a range touches are listed in order, across a year end', () => {
    expect(monthsBetween('2026-11-20', '2027-02-01')).toEqual(['2026-11', '2026-12', '2027-01', '2027-02']);
    expect(monthsBetween('2026-11-20', '2026-11-27')).toEqual(['2026-11']);
  });

  test('dates are stored sorted and without duplicates', () => {
    expect(normaliseDates(['2026-05-03', '2026-05-01', '2026-05-03'])).toEqual(['2026-05-01', '2026-05-03']);
  });

  test("today is the museum's date, not the server's", () => {
    const instant = new Date('2026-11-21T23:30:00Z');
    expect(todayIn('UTC', instant)).toBe('2026-11-21');
    expect(todayIn('Europe/Paris', instant)).toBe('2026-11-22');
    expect(todayIn('America/New_York', instant)).toBe('2026-11-21');
  });
});
