// GET /special-events: windows, defaults, ordering and paging over real HTTP.
import { LIMITS } from '../../functions/events/limits.ts';
import { addDays, todayIn } from '../../functions/events/calendar-dates.ts';
import { api, createEvent, privateYear, type SpecialEventBody } from '../support/api-client.ts';

const list = (query: string) => api<SpecialEventBody[]>('GET', `/special-events?${query}`);

describe('GET /special-events', () => {
  const year = privateYear();
  const day = (monthDay: string) => `${year}-${monthDay}`;
  let created: Record<string, SpecialEventBody>;

  beforeAll(async () => {
    created = {
      early: await createEvent({ name: 'Early', dates: [day('03-01')] }),
      span: await createEvent({ name: 'Span', dates: [day('02-27'), day('03-02'), day('03-04')] }),
      beta: await createEvent({ name: 'Beta', dates: [day('03-02')] }),
      alpha: await createEvent({ name: 'Alpha', dates: [day('03-02')] }),
      late: await createEvent({ name: 'Late', dates: [day('03-08')] }),
      outside: await createEvent({ name: 'Outside', dates: [day('03-09')] }),
    };
  });

  test('returns the events with a date in [startDate, endDate] once each, by first date in range, then name', async () => {
    const response = await list(`startDate=${day('03-01')}&endDate=${day('03-08')}`);
    expect(response.status).toBe(200);
    expect(response.body.map((e) => e.name)).toEqual(['Early', 'Alpha', 'Beta', 'Span', 'Late']);
    expect(response.body.find((e) => e.name === 'Span')).toEqual(created.span);
  });

  test('endDate defaults to seven days after startDate', async () => {
    const response = await list(`startDate=${day('03-01')}`);
    expect(response.body.map((e) => e.name)).toEqual(['Early', 'Alpha', 'Beta', 'Span', 'Late']);
  });

  test("startDate defaults to today in the museum's time zone", async () => {
    const today = todayIn('UTC');
    // "!" sorts before any other name: on their dates these events come first, whatever other
    // test files create this week, so the default page shows whether each is in the range.
    const yesterday = await createEvent({ name: `! Yesterday ${Math.random()}`, dates: [addDays(today, -1)] });
    const todays = await createEvent({ name: `! Today ${Math.random()}`, dates: [today] });
    const response = await api<SpecialEventBody[]>('GET', '/special-events?limit=30');
    expect(response.status).toBe(200);
    const ids = response.body.map((e) => e.eventId);
    expect(ids).toContain(todays.eventId);
    expect(ids).not.toContain(yesterday.eventId);
  });

  test('pages of any size join up without gaps or duplicates; past the end is an empty page', async () => {
    const range = `startDate=${day('02-01')}&endDate=${day('03-31')}`;
    const all = (await list(`${range}&limit=30`)).body.map((e) => e.eventId);
    expect(all).toHaveLength(6);
    for (const limit of [1, 2, 4]) {
      const pages: string[] = [];
      for (let page = 1; page <= Math.ceil(all.length / limit); page++) {
        pages.push(...(await list(`${range}&limit=${limit}&page=${page}`)).body.map((e) => e.eventId));
      }
      expect(pages).toEqual(all);
    }
    const beyond = await list(`${range}&limit=4&page=3`);
    expect(beyond.status).toBe(200);
    expect(beyond.body).toEqual([]);
  });

  test('the default page holds at most 10 events', async () => {
    const busyDay = `${privateYear()}-07-14`;
    for (let i = 0; i < 12; i++) await createEvent({ name: `Busy ${String(i).padStart(2, '0')}`, dates: [busyDay] });
    const response = await list(`startDate=${busyDay}`);
    expect(response.body).toHaveLength(10);
    expect((await list(`startDate=${busyDay}&page=2`)).body).toHaveLength(2);
  });

  test('an event patched out of the window disappears from it and appears in its new one', async () => {
    const moved = await createEvent({ name: 'Moved', dates: [day('05-10')] });
    await api('PATCH', `/special-events/${moved.eventId}`, { json: { dates: [day('06-20')] } });
    expect((await list(`startDate=${day('05-05')}&endDate=${day('05-15')}`)).body.map((e) => e.eventId)).not.toContain(moved.eventId);
    expect((await list(`startDate=${day('06-20')}&endDate=${day('06-20')}`)).body.map((e) => e.eventId)).toEqual([moved.eventId]);
  });

  test('a deleted event is gone from the list', async () => {
    const gone = await createEvent({ name: 'Gone', dates: [day('08-08')] });
    await api('DELETE', `/special-events/${gone.eventId}`);
    expect((await list(`startDate=${day('08-08')}&endDate=${day('08-08')}`)).body).toEqual([]);
  });

  test.each([
    ['limit=0', 'limit'],
    ['limit=31', 'limit'],
    ['limit=2.5', 'limit'],
    ['limit=ten', 'limit'],
    ['page=0', 'page'],
    ['page=-1', 'page'],
    [`page=${LIMITS.maxListPage + 1}`, 'page'],
    ['startDate=2026-02-30', 'startDate'],
    ['startDate=20260201', 'startDate'],
    ['startDate=2026-03-10&endDate=2026-03-09', 'endDate'],
    ['startDate=2026-01-01&endDate=2027-01-03', 'endDate'],
    ['limit=5&limit=6', 'limit'],
    ['colour=red', 'colour'],
  ])('?%s is a 400 problem naming %s', async (query, field) => {
    const response = await api<{ errors: { field: string }[] }>('GET', `/special-events?${query}`);
    expect(response.status).toBe(400);
    expect(response.body.errors.map((e) => e.field)).toContain(field);
  });

  test('a range of exactly 366 days is accepted', async () => {
    expect((await list('startDate=2028-01-01&endDate=2029-01-01')).status).toBe(200);
  });
});
