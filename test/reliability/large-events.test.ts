// Events of a whole year of dates (366: 13 month items, one transaction) and events with dates in
// more months than one transaction can write (the leased path), through the local API and
// through a fault proxy: every state a reader can see is a committed one, every committed date
// has its index entry at every moment, racing whole-year writes make progress (at least one 200,
// the losers 409 with Retry-After, never 503), and what an interrupted write leaves is cleaned by
// the lists that meet it. Table and index are inspected directly (stored-items.ts).
import { PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { createDocumentClient } from '../../functions/store/dynamodb-client.ts';
import { EventsStore } from '../../functions/store/events-store.ts';
import type { NewSpecialEvent, SpecialEvent } from '../../functions/events/event-schema.ts';
import { LIMITS } from '../../functions/events/limits.ts';
import { keys, MONTH_INDEX } from '../../functions/store/table-definition.ts';
import { localClient } from '../../lib/local/dynamodb-local.ts';
import { api, type SpecialEventBody } from '../support/api-client.ts';
import { listedIn, monthWindows } from '../support/list-windows.ts';
import { startFaultProxy, type FaultProxy } from '../support/fault-proxy.ts';
import { testEnvironment } from '../support/test-environment.ts';
import { dayOfYear, RESERVED_YEARS } from './reserved-years.ts';
import { closeTableClient, storageProblems, storedItems, tableClient } from './stored-items.ts';

const LEAP_YEAR = RESERVED_YEARS.largeEvents;
const MANY_MONTHS_YEAR = RESERVED_YEARS.manyMonths;

afterAll(() => closeTableClient());

/** Every day of `year` from `first` (0-based), `count` of them. */
function days(year: number, count: number, first = 0): string[] {
  return Array.from({ length: count }, (_, i) => dayOfYear(year, first + i));
}

/** The list shows `expected` (or nothing of `eventId`) in exactly the windows that hold one of its dates. */
async function expectListed(eventId: string, expected: SpecialEventBody | undefined, windows: { startDate: string; endDate: string }[]) {
  for (const window of windows) {
    const found = (await listedIn(api, window)).filter((event) => event.eventId === eventId);
    const wanted = expected?.dates.some((date) => date >= window.startDate && date <= window.endDate) ? [expected] : [];
    expect({ window, found }).toEqual({ window, found: wanted });
  }
}

/** The `day`-th of `count` consecutive months from January of `year`: dates in `count` distinct months. */
function monthly(year: number, count: number, day = 1): string[] {
  return Array.from({ length: count }, (_, i) => new Date(Date.UTC(year, i, day)).toISOString().slice(0, 10));
}

/** Whole-year windows (a list may span 366 days) over `years` years from `year`. */
function yearWindows(year: number, years: number): { startDate: string; endDate: string }[] {
  return Array.from({ length: years }, (_, i) => ({ startDate: `${year + i}-01-01`, endDate: `${year + i}-12-31` }));
}

/** No committed date may ever lack its index item (leftovers are allowed until cleaned). */
async function expectEveryCommittedDateIndexed(eventId: string, committed: SpecialEventBody | undefined) {
  const problems = await storageProblems(eventId, committed);
  expect(problems.filter((problem) => !problem.startsWith('orphan'))).toEqual([]);
}

describe('an event with a date for every day of a leap year, through the API', () => {
  test('is created, listed in every window of its year, replaced by 365 other dates, renamed and deleted', async () => {
    expect(LIMITS.maxDates).toBeGreaterThanOrEqual(366);
    const year = days(LEAP_YEAR, 366);
    const created = await api<SpecialEventBody>('POST', '/special-events', {
      json: { name: 'Year-long installation', location: 'Atrium', eventDescription: 'Every day', dates: [...year].reverse(), price: 12 },
    });
    expect(created.status).toBe(201);
    expect(created.body.dates).toEqual(year);
    const { eventId } = created.body;
    expect(await storageProblems(eventId, created.body)).toEqual([]);
    const windows = [
      ...monthWindows(LEAP_YEAR),
      { startDate: `${LEAP_YEAR}-01-01`, endDate: `${LEAP_YEAR}-12-31` },
      { startDate: `${LEAP_YEAR}-02-29`, endDate: `${LEAP_YEAR}-02-29` },
      { startDate: `${LEAP_YEAR - 1}-12-01`, endDate: `${LEAP_YEAR - 1}-12-31` },
    ];
    await expectListed(eventId, created.body, windows);

    const next = days(LEAP_YEAR + 1, 365);
    const replaced = await api<SpecialEventBody>('PATCH', `/special-events/${eventId}`, { json: { dates: next } });
    expect(replaced.status).toBe(200);
    expect(replaced.headers.get('etag')).toBe('"2"');
    expect(replaced.body.dates).toEqual(next);
    expect(await storageProblems(eventId, replaced.body)).toEqual([]);
    const nextWindows = [...windows, ...monthWindows(LEAP_YEAR + 1)];
    await expectListed(eventId, replaced.body, nextWindows);

    const renamed = await api<SpecialEventBody>('PATCH', `/special-events/${eventId}`, { json: { name: 'Renamed installation' } });
    expect(renamed.status).toBe(200);
    expect(renamed.body).toEqual({ ...replaced.body, name: 'Renamed installation' });
    expect(await storageProblems(eventId, renamed.body)).toEqual([]);
    await expectListed(eventId, renamed.body, monthWindows(LEAP_YEAR + 1));

    expect((await api('DELETE', `/special-events/${eventId}`)).status).toBe(204);
    expect((await api('GET', `/special-events/${eventId}`)).status).toBe(404);
    expect(await storageProblems(eventId, undefined)).toEqual([]);
    await expectListed(eventId, undefined, monthWindows(LEAP_YEAR + 1));
  });

  test('366 dates are accepted and 367 are a 400 problem', async () => {
    const tooMany = [...days(LEAP_YEAR, 366), `${LEAP_YEAR + 1}-01-01`];
    const response = await api('POST', '/special-events', {
      json: { name: 'Too long', location: 'Atrium', eventDescription: 'Too many days', dates: tooMany, price: 1 },
    });
    expect(response.status).toBe(400);
  });
});

describe('whole-year PATCHes of one event', () => {
  const year = LEAP_YEAR + 2;
  const patchBody = (i: number) => ({ name: `Raced year ${i}`, dates: days(year + (i % 2), 300, (i * 5) % 60) });

  test('20 sequential whole-year PATCHes all answer 200, one version each', async () => {
    const created = await api<SpecialEventBody>('POST', '/special-events', {
      json: { name: 'Sequential year', location: 'Atrium', eventDescription: 'Replaced', dates: days(year, 365), price: 1 },
    });
    expect(created.status).toBe(201);
    let last = created.body;
    for (let i = 0; i < 20; i++) {
      const patched = await api<SpecialEventBody>('PATCH', `/special-events/${created.body.eventId}`, { json: patchBody(i) });
      expect({ i, status: patched.status }).toEqual({ i, status: 200 });
      expect(patched.headers.get('etag')).toBe(`"${i + 2}"`);
      last = patched.body;
    }
    expect(await storageProblems(created.body.eventId, last)).toEqual([]);
    await expectListed(created.body.eventId, last, [...monthWindows(year), ...monthWindows(year + 1)]);
    expect((await api('DELETE', `/special-events/${created.body.eventId}`)).status).toBe(204);
  });

  test.each([2, 4, 8, 16])('a burst of %i concurrent whole-year PATCHes and a DELETE: at least one 200, no 503, losers 409 with Retry-After', async (n) => {
    const created = await api<SpecialEventBody>('POST', '/special-events', {
      json: { name: 'Raced year', location: 'Atrium', eventDescription: 'Raced', dates: days(year, 365), price: 1 },
    });
    expect(created.status).toBe(201);
    const { eventId } = created.body;
    const patches = Array.from({ length: n }, (_, i) => api<SpecialEventBody>('PATCH', `/special-events/${eventId}`, { json: patchBody(i) }));
    // The DELETE goes in the middle of the burst; it may win, lose (409) or come after (404 for nothing).
    const deletion = new Promise((resolve) => setTimeout(resolve, 20)).then(() => api('DELETE', `/special-events/${eventId}`));
    const results = await Promise.all([...patches, deletion]);
    const statuses = results.map((result) => result.status);
    for (const status of statuses) expect([200, 204, 404, 409]).toContain(status);
    expect(statuses.filter((status) => status === 200 || status === 204).length).toBeGreaterThanOrEqual(1);
    for (const result of results.filter((r) => r.status === 409)) expect(Number(result.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    const winners = results.filter((result) => result.status === 200);
    const versions = winners.map((result) => Number(JSON.parse(result.headers.get('etag') ?? '0')));
    // Winners were serialised: distinct versions.
    expect(new Set(versions).size).toBe(versions.length);
    const final = await api<SpecialEventBody>('GET', `/special-events/${eventId}`);
    const committed = final.status === 200 ? final.body : undefined;
    // The final state is the last answered 200 (highest version), or the DELETE's.
    if (committed) {
      const lastWinner = winners.sort((a, b) => Number(JSON.parse(b.headers.get('etag') ?? '0')) - Number(JSON.parse(a.headers.get('etag') ?? '0')))[0];
      expect(committed).toEqual(lastWinner?.body ?? created.body);
    } else {
      expect(statuses.at(-1)).toBe(204);
    }
    expect(await storageProblems(eventId, committed)).toEqual([]);
    await expectListed(eventId, committed, monthWindows(year));
    if (committed) expect((await api('DELETE', `/special-events/${eventId}`)).status).toBe(204);
  });
});

describe('an event with dates in more months than one transaction can write (the leased path)', () => {
  test('is created, listed, replaced, renamed, read mid-month and deleted through the API', async () => {
    const dates = monthly(MANY_MONTHS_YEAR, 120, 15);
    const created = await api<SpecialEventBody>('POST', '/special-events', {
      json: { name: 'A decade of fifteenths', location: 'Archive', eventDescription: 'Monthly', dates, price: 3 },
    });
    expect(created.status).toBe(201);
    const { eventId } = created.body;
    expect(await storageProblems(eventId, created.body)).toEqual([]);
    const windows = [
      ...yearWindows(MANY_MONTHS_YEAR, 11),
      // Ranges starting mid-month: the first month's item has its first date before startDate.
      { startDate: `${MANY_MONTHS_YEAR}-03-10`, endDate: `${MANY_MONTHS_YEAR}-03-20` },
      { startDate: `${MANY_MONTHS_YEAR}-03-16`, endDate: `${MANY_MONTHS_YEAR}-04-14` },
    ];
    await expectListed(eventId, created.body, windows);
    const moved = await api<SpecialEventBody>('PATCH', `/special-events/${eventId}`, { json: { name: 'Moved decade', dates: monthly(MANY_MONTHS_YEAR, 130, 2) } });
    expect(moved.status).toBe(200);
    expect(moved.headers.get('etag')).toBe('"2"');
    await expectListed(eventId, moved.body, windows);
    expect(await storageProblems(eventId, moved.body)).toEqual([]);
    expect((await api('DELETE', `/special-events/${eventId}`)).status).toBe(204);
    await expectListed(eventId, undefined, windows);
    expect(await storageProblems(eventId, undefined)).toEqual([]);
  });

  test('a write during another large write\'s lease is a 409 with Retry-After, and the event stays serial', async () => {
    const created = await api<SpecialEventBody>('POST', '/special-events', {
      json: { name: 'Leased decade', location: 'Archive', eventDescription: 'Monthly', dates: monthly(MANY_MONTHS_YEAR, 100, 20), price: 3 },
    });
    expect(created.status).toBe(201);
    const { eventId } = created.body;
    const results = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        api<SpecialEventBody>('PATCH', `/special-events/${eventId}`, { json: i % 2 ? { price: i } : { name: `Leased ${i}`, dates: monthly(MANY_MONTHS_YEAR, 100 - i, 21) } }),
      ),
    );
    for (const result of results) expect([200, 409]).toContain(result.status);
    expect(results.some((result) => result.status === 200)).toBe(true);
    for (const result of results.filter((r) => r.status === 409)) expect(Number(result.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    const versions = results.filter((r) => r.status === 200).map((r) => Number(JSON.parse(r.headers.get('etag') ?? '0')));
    expect(new Set(versions).size).toBe(versions.length);
    const final = await api<SpecialEventBody>('GET', `/special-events/${eventId}`);
    expect(final.headers.get('etag')).toBe(`"${Math.max(...versions)}"`);
    await expectListed(eventId, final.body, yearWindows(MANY_MONTHS_YEAR, 9));
    expect(await storageProblems(eventId, final.body)).toEqual([]);
    expect((await api('DELETE', `/special-events/${eventId}`)).status).toBe(204);
  });
});

describe('a leased write interrupted part-way (fault proxy in front of DynamoDB Local)', () => {
  let proxy: FaultProxy;
  let store: EventsStore;
  let client: ReturnType<typeof localClient>;
  let nextDay = 1;
  const YEARS = 12;

  beforeAll(async () => {
    proxy = await startFaultProxy(testEnvironment().dynamodbEndpoint);
    client = localClient(proxy.endpoint);
    store = new EventsStore(createDocumentClient(client), testEnvironment().tableName);
  });

  afterEach(() => proxy.clear());

  afterAll(async () => {
    client.destroy();
    await proxy.close();
  });

  /** A fresh event with a date in each of 60 months (its own day of the month), and whole-year windows over its years. */
  async function manyMonthEvent(): Promise<{ event: SpecialEvent; windows: { startDate: string; endDate: string }[] }> {
    const input: NewSpecialEvent = { name: 'Monthly', location: 'Wing', eventDescription: 'A monthly talk', dates: monthly(MANY_MONTHS_YEAR, 60, nextDay), price: 5 };
    nextDay += 1;
    const { event } = await store.createEvent(input);
    return { event, windows: yearWindows(MANY_MONTHS_YEAR, YEARS) };
  }

  const asBody = (event: SpecialEvent): SpecialEventBody => event;
  /** 70 months of other dates: 70 new month items (one transaction of puts), then the commit. */
  const replacement = () => ({ name: 'Moved monthly', dates: monthly(MANY_MONTHS_YEAR, 70, 28) });

  test.each([
    ['while writing the new index items', { fault: 'internal-server-error', operation: 'TransactWriteItems', after: 0 }],
    ['at the commit', { fault: 'internal-server-error', operation: 'TransactWriteItems', after: 1 }],
    ['with the commit stuck (connection reset)', { fault: 'connection-reset', operation: 'TransactWriteItems', after: 1 }],
  ] as const)('a replacement that fails %s leaves the event as it was, releases its lease; lists delete its items once another write commits', async (_point, rule) => {
    const { event, windows } = await manyMonthEvent();
    proxy.inject(rule);
    await expect(store.updateEvent(event.eventId, replacement())).rejects.toThrow();
    proxy.clear();
    expect(await store.getEvent(event.eventId)).toEqual({ event, version: 1 });
    await expectEveryCommittedDateIndexed(event.eventId, asBody(event));
    await expectListed(event.eventId, asBody(event), windows);
    // No lease is left: the next write goes through at once, and lists delete the failed attempt's items.
    const { event: moved } = await store.updateEvent(event.eventId, { name: 'Moved elsewhere', dates: monthly(MANY_MONTHS_YEAR, 55, 27) });
    await expectListed(event.eventId, asBody(moved), windows);
    expect(await storageProblems(event.eventId, asBody(moved))).toEqual([]);
  });

  test('a commit whose response is lost is retried by the SDK into one version', async () => {
    const { event, windows } = await manyMonthEvent();
    proxy.inject({ fault: 'lost-response', operation: 'TransactWriteItems', after: 1, times: 1 });
    const updated = await store.updateEvent(event.eventId, replacement());
    expect(updated.version).toBe(2);
    expect(await store.getEvent(event.eventId)).toEqual(updated);
    await expectListed(event.eventId, asBody(updated.event), windows);
    expect(await storageProblems(event.eventId, asBody(updated.event))).toEqual([]);
  });

  test('a replacement whose clean-up fails after the commit answers with the new state; lists delete the stale items', async () => {
    const { event, windows } = await manyMonthEvent();
    proxy.inject({ fault: 'internal-server-error', operation: 'DeleteItem', after: 5 });
    const updated = await store.updateEvent(event.eventId, replacement());
    proxy.clear();
    expect(await store.getEvent(event.eventId)).toEqual(updated);
    await expectEveryCommittedDateIndexed(event.eventId, asBody(updated.event));
    expect((await storedItems(event.eventId)).dateItems.length).toBeGreaterThan(70);
    await expectListed(event.eventId, asBody(updated.event), windows);
    expect(await storageProblems(event.eventId, asBody(updated.event))).toEqual([]);
  });

  test('a DELETE whose clean-up fails after the commit is done; its leftovers are deleted by lists', async () => {
    const { event, windows } = await manyMonthEvent();
    const patched = await store.updateEvent(event.eventId, { dates: monthly(MANY_MONTHS_YEAR, 110, 3) });
    proxy.inject({ fault: 'internal-server-error', operation: 'DeleteItem', after: 10 });
    await store.deleteEvent(event.eventId);
    proxy.clear();
    expect(await store.getEvent(event.eventId)).toBeUndefined();
    expect((await storedItems(event.eventId)).dateItems.length).toBeGreaterThan(0);
    await expectListed(event.eventId, undefined, windows);
    // Items a PATCH wrote (version 2) go at once: the event existed, so it was deleted. Items its
    // create wrote (version 1) could be a create still in flight: they go once older than any
    // write may take, simulated here by backdating them.
    const left = (await storedItems(event.eventId)).dateItems;
    expect(left.every((item) => item.writeVersion === 1)).toBe(true);
    for (const item of left) {
      const entry = keys.monthIndexEntry(item);
      const backdated = { ...entry.stamp, writtenAt: Date.now() - 10 * 60_000 };
      const monthIndex = keys.monthIndex(entry.firstDate, entry.name, event.eventId, backdated);
      await tableClient().send(new PutCommand({ TableName: testEnvironment().tableName, Item: { ...item, ...monthIndex, ...keys.monthEndIndex(entry.dates, monthIndex) } }));
    }
    await expectListed(event.eventId, undefined, windows);
    expect(await storageProblems(event.eventId, undefined)).toEqual([]);
    expect(patched.version).toBe(2);
  });

  test('a create interrupted while writing its index items leaves nothing a reader sees', async () => {
    const window = { startDate: `${MANY_MONTHS_YEAR + 14}-01-01`, endDate: `${MANY_MONTHS_YEAR + 14}-12-31` };
    const before = await listedIn(api, window);
    proxy.inject({ fault: 'internal-server-error', operation: 'TransactWriteItems', after: 0 });
    await expect(
      store.createEvent({ name: 'Never created', location: 'Wing', eventDescription: 'Dies', dates: monthly(MANY_MONTHS_YEAR + 14, 60), price: 1 }),
    ).rejects.toThrow();
    proxy.clear();
    expect(await listedIn(api, window)).toEqual(before);
    const { Items = [] } = await tableClient().send(
      new QueryCommand({
        TableName: testEnvironment().tableName,
        IndexName: MONTH_INDEX,
        KeyConditionExpression: 'gsi1pk = :month',
        ExpressionAttributeValues: { ':month': keys.monthIndexPartition(`${MANY_MONTHS_YEAR + 14}-01`) },
      }),
    );
    // None of its index items were written: the first transaction of puts failed as a whole.
    expect(Items.some((item) => String(item.gsi1sk).includes('Never created'))).toBe(false);
  });
});
