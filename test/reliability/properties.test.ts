// Property-based tests (fast-check) against the local API: for generated valid events, changes
// and queries, the API must behave like a simple in-memory model. A failure prints the seed and
// the shrunk counterexample; rerun it with FAST_CHECK_SEED=<seed>.
import fc from 'fast-check';
import { isDeepStrictEqual } from 'node:util';
import { api, apiRetrying, readUntilSettled, useInjectedApi, type SpecialEventBody } from '../support/api-client.ts';
import { jestTimeoutFor, propertyRuns } from './property-runs.ts';
import { dayOfYear, listPropertyYears, RESERVED_YEARS } from './reserved-years.ts';
import { closeTableClient, storageProblems } from './stored-items.ts';
import { eventChanges, eventInput, eventTemplate, inYear, normalised, type EventInput } from './valid-events.ts';

/**
 * Each property runs all its cases or fails (property-runs.ts). The limit is generous: a case is a
 * few requests, a fraction of a second idle and a few seconds on a machine loaded several times over.
 */
const TIME_LIMIT_MS = 240_000;
const runs = (numRuns: number) => propertyRuns(numRuns, TIME_LIMIT_MS);

async function create(input: EventInput): Promise<SpecialEventBody> {
  const response = await apiRetrying<SpecialEventBody>('POST', '/special-events', { json: input });
  if (response.status !== 201) throw new Error(`create answered ${response.status}: ${response.text}`);
  return response.body;
}

useInjectedApi();
afterAll(() => closeTableClient());

describe('created events', () => {
  test(
    'read back exactly as sent: text trimmed, dates sorted and de-duplicated, ETag "1", one index item per month',
    async () => {
      await fc.assert(
        fc.asyncProperty(eventInput(RESERVED_YEARS.scratch), async (input) => {
          const created = await apiRetrying<SpecialEventBody>('POST', '/special-events', { json: input });
          expect(created.status).toBe(201);
          const expected = { eventId: created.body.eventId, ...normalised(input) };
          expect(created.body).toEqual(expected);
          expect(created.headers.get('etag')).toBe('"1"');

          const read = await api<SpecialEventBody>('GET', `/special-events/${expected.eventId}`);
          expect(read.status).toBe(200);
          expect(read.body).toEqual(expected);
          expect(read.headers.get('etag')).toBe('"1"');
          expect(await storageProblems(expected.eventId, expected)).toEqual([]);
        }),
        runs(25),
      );
    },
    jestTimeoutFor(TIME_LIMIT_MS),
  );
});

describe('PATCH with a random subset of fields', () => {
  test(
    'changes exactly those fields, keeps the others, bumps the ETag by one and re-indexes the dates',
    async () => {
      await fc.assert(
        fc.asyncProperty(
          eventInput(RESERVED_YEARS.scratch, { maxLength: 8 }),
          eventChanges(RESERVED_YEARS.scratch),
          async (input, changes) => {
            const before = await create(input);
            const patched = await apiRetrying<SpecialEventBody>('PATCH', `/special-events/${before.eventId}`, {
              json: changes,
              headers: { 'If-Match': '"1"' },
            });
            expect(patched.status).toBe(200);
            const expected = { ...before, ...normalised(changes) };
            expect(patched.body).toEqual(expected);
            expect(patched.headers.get('etag')).toBe('"2"');

            const read = await api<SpecialEventBody>('GET', `/special-events/${before.eventId}`);
            expect(read.body).toEqual(expected);
            expect(await storageProblems(before.eventId, expected)).toEqual([]);
          },
        ),
        runs(25),
      );
    },
    jestTimeoutFor(TIME_LIMIT_MS),
  );
});

/** DynamoDB compares string keys as UTF-8 bytes; JavaScript's `<` compares UTF-16 code units. */
function byUtf8(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}

/** The reference model: events with a date in [start, end], by first date in range, then name (UTF-8 bytes), then id. */
function modelList(events: SpecialEventBody[], start: string, end: string): SpecialEventBody[] {
  return events
    .map((event) => ({ event, first: event.dates.find((date) => date >= start && date <= end) }))
    .filter((entry): entry is { event: SpecialEventBody; first: string } => entry.first !== undefined)
    .sort((a, b) => byUtf8(a.first, b.first) || byUtf8(a.event.name, b.event.name) || byUtf8(a.event.eventId, b.event.eventId))
    .map((entry) => entry.event);
}

describe('GET /special-events', () => {
  const nextYear = listPropertyYears();
  // Dates cluster in days 20-80 (late January to March, often Feb 1 and Mar 1) so that events
  // overlap, share first dates and ranges cross months.
  const query = fc.record({
    startDay: fc.integer({ min: 0, max: 100 }),
    spanDays: fc.integer({ min: 0, max: 90 }),
    page: fc.integer({ min: 1, max: 4 }),
    limit: fc.oneof(fc.integer({ min: 1, max: 4 }), fc.integer({ min: 1, max: 30 })),
  });

  test(
    'equals the in-memory model for random events, ranges, pages and limits; pages join without gaps or duplicates',
    async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.array(eventTemplate({ firstDay: 20, lastDay: 80, maxDates: 4, hotDays: [31, 59] }), { minLength: 1, maxLength: 10 }),
          fc.array(query, { minLength: 1, maxLength: 4 }),
          fc.integer({ min: 1, max: 4 }),
          fc.context(),
          async (templates, queries, walkLimit, context) => {
            const year = nextYear();
            const events = await Promise.all(templates.map((template) => create(inYear(template, year))));
            context.log(`year ${year}: ${events.map((e) => `${JSON.stringify(e.name)} ${e.dates.join(',')}`).join(' | ')}`);
            try {
              // Whatever the index lag, a page lists each event at most once and only as committed
              // (no duplicate, no ghost); once the indexes have caught up it is the model.
              const committedOnly = (listed: SpecialEventBody[]) => {
                expect(new Set(listed.map((e) => e.eventId)).size).toBe(listed.length);
                for (const event of listed) expect(events).toContainEqual(event);
              };
              for (const q of queries) {
                const start = dayOfYear(year, q.startDay);
                const end = dayOfYear(year, Math.min(q.startDay + q.spanDays, 364));
                const expected = modelList(events, start, end).slice((q.page - 1) * q.limit, q.page * q.limit);
                const response = await readUntilSettled(
                  () =>
                    apiRetrying<SpecialEventBody[]>(
                      'GET',
                      `/special-events?startDate=${start}&endDate=${end}&page=${q.page}&limit=${q.limit}`,
                    ),
                  (read) => read.status === 200 && isDeepStrictEqual(read.body, expected),
                  (read) => read.status === 200 && committedOnly(read.body),
                );
                expect(response.status).toBe(200);
                expect(response.body).toEqual(expected);
              }
              // Walk every page of the whole year: the concatenation is the model, once each, in order.
              const walk = async () => {
                const walked: SpecialEventBody[] = [];
                for (let page = 1; ; page++) {
                  const response = await apiRetrying<SpecialEventBody[]>(
                    'GET',
                    `/special-events?startDate=${year}-01-01&endDate=${year}-12-31&page=${page}&limit=${walkLimit}`,
                  );
                  expect(response.status).toBe(200);
                  committedOnly(response.body);
                  walked.push(...response.body);
                  if (response.body.length < walkLimit) return walked;
                }
              };
              const model = modelList(events, `${year}-01-01`, `${year}-12-31`);
              // Pages read while the indexes catch up may overlap or leave gaps between them (an entry
              // not yet indexed shifts the ones after it); each page itself is checked as it is read.
              const walked = await readUntilSettled(walk, (read) => isDeepStrictEqual(read, model));
              expect(walked).toEqual(model);
              expect(new Set(walked.map((e) => e.eventId)).size).toBe(walked.length);
            } finally {
              // Leave the year empty, so that a later run (or a shrink step) may use it again.
              await Promise.all(events.map((event) => apiRetrying('DELETE', `/special-events/${event.eventId}`)));
            }
          },
        ),
        runs(20),
      );
    },
    jestTimeoutFor(TIME_LIMIT_MS),
  );
});
