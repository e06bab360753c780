// Property-based tests of events with large date sets (50 to 366 dates, more than one
// transaction can write): created and replaced through the local API, they must read back, be
// stored (one index item per month, nothing else) and be listed exactly as the in-memory model
// says, for random windows, pages and limits.
import fc from 'fast-check';
import { api, apiRetrying, type SpecialEventBody } from '../support/api-client.ts';
import { modelList } from './list-model.ts';
import { jestTimeoutFor, propertyRuns } from './property-runs.ts';
import { dayOfYear, RESERVED_YEARS } from './reserved-years.ts';
import { closeTableClient, storageProblems } from './stored-items.ts';
import { eventName, normalised, type EventInput } from './valid-events.ts';

/** Generous: 8 runs of up to 3 events of 366 dates take under a minute idle, several on a loaded machine. */
const LARGE_PROPERTY_TIME_LIMIT_MS = 480_000;

const DAY_NUMBERS = Array.from({ length: 366 }, (_, day) => day);

/** 50 to 366 distinct day numbers (0-365), in random order. */
const largeDays = fc
  .integer({ min: 50, max: 366 })
  .chain((count) => fc.shuffledSubarray(DAY_NUMBERS, { minLength: count, maxLength: count }));

const largeEvent = fc.record({ name: eventName, days: largeDays });

/** A new set of dates, a new name, or both. */
const largeChange = fc
  .record({ name: eventName, days: largeDays }, { requiredKeys: [] })
  .filter((change) => Object.keys(change).length > 0);

const window = fc.record({
  startDay: fc.integer({ min: 0, max: 365 }),
  spanDays: fc.integer({ min: 0, max: 365 }),
  page: fc.integer({ min: 1, max: 3 }),
  limit: fc.integer({ min: 1, max: 3 }),
});

let nextRun = 0;

afterAll(() => closeTableClient());

describe('events with large date sets', () => {
  test(
    'are stored, read back and listed as the model says, before and after a PATCH of their dates or name',
    async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.array(largeEvent, { minLength: 1, maxLength: 3 }),
          fc.array(largeChange, { minLength: 1, maxLength: 3 }),
          fc.array(window, { minLength: 2, maxLength: 4 }),
          fc.context(),
          async (templates, changes, windows, context) => {
            // One year per run in turn (each run deletes what it created); in a common year day 365 is
            // the next New Year's Day, which the windows and the model handle alike.
            const year = RESERVED_YEARS.largeProperty.first + (nextRun++ % RESERVED_YEARS.largeProperty.count);
            const inYear = (days: number[]) => days.map((day) => dayOfYear(year, day));
            const events: SpecialEventBody[] = [];
            try {
              for (const template of templates) {
                const input: EventInput = {
                  name: template.name,
                  location: 'Wing',
                  eventDescription: 'A season',
                  dates: inYear(template.days),
                  price: 1,
                };
                const created = await apiRetrying<SpecialEventBody>('POST', '/special-events', { json: input });
                expect(created.status).toBe(201);
                expect(created.body).toEqual({ eventId: created.body.eventId, ...normalised(input) });
                events.push(created.body);
              }
              const expectListsAsModel = async () => {
                for (const w of windows) {
                  const start = dayOfYear(year, w.startDay);
                  const end = dayOfYear(year, Math.min(w.startDay + w.spanDays, 365));
                  const response = await api<SpecialEventBody[]>(
                    'GET',
                    `/special-events?startDate=${start}&endDate=${end}&page=${w.page}&limit=${w.limit}`,
                  );
                  expect(response.status).toBe(200);
                  expect(response.body).toEqual(modelList(events, start, end).slice((w.page - 1) * w.limit, w.page * w.limit));
                }
              };
              await expectListsAsModel();
              for (const [i, change] of changes.entries()) {
                const index = i % events.length;
                const current = events[index] as SpecialEventBody;
                const json = {
                  ...(change.name === undefined ? {} : { name: change.name }),
                  ...(change.days ? { dates: inYear(change.days) } : {}),
                };
                context.log(`PATCH ${current.eventId}: ${change.name === undefined ? '' : 'name, '}${change.days?.length ?? 0} dates`);
                const patched = await apiRetrying<SpecialEventBody>('PATCH', `/special-events/${current.eventId}`, { json });
                expect(patched.status).toBe(200);
                const expected = { ...current, ...normalised(json) };
                expect(patched.body).toEqual(expected);
                events[index] = expected;
                expect(await storageProblems(current.eventId, expected)).toEqual([]);
              }
              await expectListsAsModel();
            } finally {
              await Promise.all(events.map((event) => apiRetrying('DELETE', `/special-events/${event.eventId}`)));
            }
            for (const event of events) expect(await storageProblems(event.eventId, undefined)).toEqual([]);
          },
        ),
        // Every claimed run must run: a run cut short by the time limit fails (property-runs.ts).
        propertyRuns(8, LARGE_PROPERTY_TIME_LIMIT_MS),
      );
    },
    jestTimeoutFor(LARGE_PROPERTY_TIME_LIMIT_MS),
  );
});
