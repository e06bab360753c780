// Events of a whole year of dates (366, more than one transaction can write), through the local
// API and through a fault proxy: every state a reader can see is a committed one, every committed
// date has its index entry at every moment, and what an interrupted write leaves is cleaned by
// the lists that meet it. Table and index are inspected directly (stored-items.ts).
import { PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { createDocumentClient } from '../../functions/shared/dynamodb-client.ts';
import { EventsStore } from '../../functions/shared/events-store.ts';
import type { NewSpecialEvent, SpecialEvent } from '../../functions/shared/event-schema.ts';
import { LIMITS } from '../../functions/shared/limits.ts';
import { keys } from '../../functions/shared/table-definition.ts';
import { localClient } from '../../lib/local/dynamodb-local.ts';
import { api, type SpecialEventBody } from '../support/api-client.ts';
import { listedIn, monthWindows } from '../support/list-windows.ts';
import { startFaultProxy, type FaultProxy } from '../support/fault-proxy.ts';
import { testEnvironment } from '../support/test-environment.ts';
import { dayOfYear, RESERVED_YEARS } from './reserved-years.ts';
import { closeTableClient, storageProblems, storedItems, tableClient } from './stored-items.ts';

const LEAP_YEAR = RESERVED_YEARS.largeEvents;
const FAULT_YEAR = RESERVED_YEARS.largeFaults;

afterAll(() => closeTableClient());

/** Every day of `year` from `first` (0-based), `count` of them. */
function days(year: number, count: number, first = 0): string[] {
  return Array.from({ length: count }, (_, i) => dayOfYear(year, first + i));
}

/** The list shows `expected` (or nothing of `eventId`) in exactly the windows that hold one of its dates. */
async function expectListed(eventId: string, expected: SpecialEventBody | undefined, windows: { startDate: string; endDate: string }[]) {
  for (const window of windows) {
    const found = (await listedIn(api, window)).filter((event) => event.eventId === eventId);
    const wanted = expected && expected.dates.some((date) => date >= window.startDate && date <= window.endDate) ? [expected] : [];
    expect({ window, found }).toEqual({ window, found: wanted });
  }
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

describe('concurrent PATCHes of whole years and a DELETE', () => {
  test('end in one serial outcome, with every committed date indexed and no leftover once listed', async () => {
    const created = await api<SpecialEventBody>('POST', '/special-events', {
      json: { name: 'Raced year', location: 'Atrium', eventDescription: 'Raced', dates: days(LEAP_YEAR + 2, 365), price: 1 },
    });
    expect(created.status).toBe(201);
    const { eventId } = created.body;
    // Each PATCH moves the event to its own offset in the year, with its own name: 300 dates each.
    const patches = Array.from({ length: 12 }, (_, i) =>
      api<SpecialEventBody>('PATCH', `/special-events/${eventId}`, { json: { name: `Raced year ${i}`, dates: days(LEAP_YEAR + 2, 300, i * 5) } }),
    );
    const deletion = new Promise((resolve) => setTimeout(resolve, 50)).then(() => api('DELETE', `/special-events/${eventId}`));
    const results = await Promise.all([...patches, deletion]);
    // 503: a PATCH that could not finish before the function's deadline (the machine is shared).
    for (const result of results) expect([200, 204, 404, 409, 503]).toContain(result.status);
    const versions = results.filter((result) => result.status === 200).map((result) => Number(JSON.parse(result.headers.get('etag') ?? '0')));
    // Winners got distinct versions: they were serialised.
    expect(new Set(versions).size).toBe(versions.length);
    const final = await api<SpecialEventBody>('GET', `/special-events/${eventId}`);
    const committed = final.status === 200 ? final.body : undefined;
    if (results.at(-1)?.status === 204) expect(committed).toBeUndefined();
    if (committed) expect(committed.name).toMatch(/^Raced year \d+$/);
    await expectEveryCommittedDateIndexed(eventId, committed);
    await expectListed(eventId, committed, monthWindows(LEAP_YEAR + 2));
    // The lists above deleted what the losers and the DELETE left behind.
    expect(await storageProblems(eventId, committed)).toEqual([]);
  });
});

describe('a large write interrupted part-way (fault proxy in front of DynamoDB Local)', () => {
  let proxy: FaultProxy;
  let store: EventsStore;
  let client: ReturnType<typeof localClient>;
  let nextFirstDay = 0;

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

  /** A fresh 200-date event in the fault years, and the windows its dates and the next ones span. */
  async function largeEvent(): Promise<{ event: SpecialEvent; windows: { startDate: string; endDate: string }[] }> {
    const input: NewSpecialEvent = { name: 'Season', location: 'Wing', eventDescription: 'A season', dates: days(FAULT_YEAR, 200, nextFirstDay), price: 5 };
    nextFirstDay += 1;
    const { event } = await store.createEvent(input);
    return { event, windows: [...monthWindows(FAULT_YEAR), ...monthWindows(FAULT_YEAR + 1)] };
  }

  const asBody = (event: SpecialEvent): SpecialEventBody => event as SpecialEventBody;

  test.each([
    // 300 new index items are written as 3 transactions of 100, then the commit is the 4th.
    ['while writing the new index items', { fault: 'internal-server-error', operation: 'TransactWriteItems', after: 1 }],
    ['at the commit', { fault: 'internal-server-error', operation: 'TransactWriteItems', after: 3 }],
    ['with the commit stuck (connection reset)', { fault: 'connection-reset', operation: 'TransactWriteItems', after: 3 }],
  ] as const)('a replacement that fails %s leaves the event as it was; lists delete its items once another write commits', async (_point, rule) => {
    const { event, windows } = await largeEvent();
    proxy.inject(rule);
    const replacement = { name: 'Moved season', dates: days(FAULT_YEAR + 1, 300) };
    await expect(store.updateEvent(event.eventId, replacement)).rejects.toThrow();
    proxy.clear();
    expect(await store.getEvent(event.eventId)).toEqual({ event, version: 1 });
    await expectEveryCommittedDateIndexed(event.eventId, asBody(event));
    expect((await storedItems(event.eventId)).dateItems.length).toBeGreaterThan(event.dates.length);
    await expectListed(event.eventId, asBody(event), windows);
    // Another write commits version 2; lists then find the failed attempt's items (version 2, not
    // committed) and delete them.
    const { event: moved } = await store.updateEvent(event.eventId, { name: 'Moved elsewhere', dates: days(FAULT_YEAR + 1, 100, 200) });
    await expectListed(event.eventId, asBody(moved), windows);
    expect(await storageProblems(event.eventId, asBody(moved))).toEqual([]);
  });

  test('a commit whose response is lost is retried by the SDK into one version', async () => {
    const { event, windows } = await largeEvent();
    // 250 new index items: 3 transactions, then the commit.
    proxy.inject({ fault: 'lost-response', operation: 'TransactWriteItems', after: 3, times: 1 });
    const updated = await store.updateEvent(event.eventId, { dates: days(FAULT_YEAR + 1, 250) });
    expect(updated.version).toBe(2);
    expect(await store.getEvent(event.eventId)).toEqual(updated);
    expect(await storageProblems(event.eventId, asBody(updated.event))).toEqual([]);
    await expectListed(event.eventId, asBody(updated.event), windows);
  });

  test('a replacement whose clean-up fails after the commit answers with the new state; lists delete the stale items', async () => {
    const { event, windows } = await largeEvent();
    proxy.inject({ fault: 'internal-server-error', operation: 'DeleteItem', after: 30 });
    const updated = await store.updateEvent(event.eventId, { name: 'Cleaned later', dates: days(FAULT_YEAR + 1, 320) });
    proxy.clear();
    expect(await store.getEvent(event.eventId)).toEqual(updated);
    await expectEveryCommittedDateIndexed(event.eventId, asBody(updated.event));
    expect((await storedItems(event.eventId)).dateItems.length).toBeGreaterThan(320);
    await expectListed(event.eventId, asBody(updated.event), windows);
    expect(await storageProblems(event.eventId, asBody(updated.event))).toEqual([]);
  });

  test('a rename interrupted at its commit never shows the new name; the finished rename never shows the old one', async () => {
    const { event, windows } = await largeEvent();
    // 200 new-name index items: 2 transactions, then the commit.
    proxy.inject({ fault: 'internal-server-error', operation: 'TransactWriteItems', after: 2 });
    await expect(store.updateEvent(event.eventId, { name: 'A new name' })).rejects.toThrow();
    proxy.clear();
    await expectListed(event.eventId, asBody(event), windows);
    const renamed = await store.updateEvent(event.eventId, { name: 'A new name' });
    await expectListed(event.eventId, asBody(renamed.event), windows);
    expect(await storageProblems(event.eventId, asBody(renamed.event))).toEqual([]);
  });

  test('a DELETE whose clean-up fails after the commit is done; its leftovers are deleted by lists', async () => {
    const { event, windows } = await largeEvent();
    const patched = await store.updateEvent(event.eventId, { dates: [...event.dates, ...days(FAULT_YEAR + 1, 50)] });
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
    expect(left.length).toBeGreaterThan(0);
    for (const item of left) {
      const entry = keys.dateIndexEntry(item);
      const backdated = { version: 1, writtenAt: Date.now() - 10 * 60_000, writeId: entry.stamp?.writeId ?? 'old' };
      await tableClient().send(new PutCommand({ TableName: testEnvironment().tableName, Item: { ...item, ...keys.dateIndex(entry.date, entry.name, event.eventId, backdated) } }));
    }
    await expectListed(event.eventId, undefined, windows);
    expect(await storageProblems(event.eventId, undefined)).toEqual([]);
    expect(patched.version).toBe(2);
  });

  test('a create interrupted while writing its index items leaves nothing a reader sees', async () => {
    const before = await listedIn(api, { startDate: `${FAULT_YEAR + 1}-06-01`, endDate: `${FAULT_YEAR + 1}-06-30` });
    proxy.inject({ fault: 'internal-server-error', operation: 'TransactWriteItems', after: 1 });
    await expect(
      store.createEvent({ name: 'Never created', location: 'Wing', eventDescription: 'Dies', dates: days(FAULT_YEAR + 1, 365), price: 1 }),
    ).rejects.toThrow();
    proxy.clear();
    expect(await listedIn(api, { startDate: `${FAULT_YEAR + 1}-06-01`, endDate: `${FAULT_YEAR + 1}-06-30` })).toEqual(before);
    const { Items = [] } = await tableClient().send(
      new QueryCommand({
        TableName: testEnvironment().tableName,
        IndexName: 'byDate',
        KeyConditionExpression: 'gsi1pk = :month',
        ExpressionAttributeValues: { ':month': keys.dateIndexPartition(`${FAULT_YEAR + 1}-01`) },
      }),
    );
    // Its index items stay until they are older than any write may take (5 minutes), then the lists delete them.
    expect(Items.some((item) => String(item.gsi1sk).includes('Never created'))).toBe(true);
  });
});
