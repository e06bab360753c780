// Events of a whole year of dates (366: 13 month items) and events at the month limit (48 month
// items), through the local API and through a fault proxy: every write is one transaction, every
// state a reader can see is a committed one, racing whole-year writes make progress (at least one
// 200, the losers 409 with Retry-After, a throttled write's 503 followed as told), and an interrupted write leaves nothing
// behind. Table and index are inspected directly (stored-items.ts).
import { isDeepStrictEqual } from 'node:util';
import { createDocumentClient } from '../../functions/store/dynamodb-client.ts';
import { EventsStore } from '../../functions/store/events-store.ts';
import type { NewSpecialEvent, SpecialEvent } from '../../functions/events/event-schema.ts';
import { LIMITS } from '../../functions/events/limits.ts';
import { localClient } from '../../lib/local/dynamodb-local.ts';
import { LOCAL_TABLE_NAMES } from '../../lib/local/local-tables.ts';
import { api, apiRetrying, readUntilSettled, useInjectedApi, type SpecialEventBody } from '../support/api-client.ts';
import { listedIn, monthWindows } from '../support/list-windows.ts';
import { startFaultProxy, type FaultProxy } from '../../bench/support/fault-proxy.ts';
import { testEnvironment } from '../support/test-environment.ts';
import { dayOfYear, RESERVED_YEARS } from './reserved-years.ts';
import { closeTableClient, storageProblems } from './stored-items.ts';

const LEAP_YEAR = RESERVED_YEARS.largeEvents;
const MANY_MONTHS_YEAR = RESERVED_YEARS.manyMonths;

useInjectedApi();
afterAll(() => closeTableClient());

/** Every day of `year` from `first` (0-based), `count` of them. */
function days(year: number, count: number, first = 0): string[] {
  return Array.from({ length: count }, (_, i) => dayOfYear(year, first + i));
}

/**
 * The list shows `expected` (or nothing of `eventId`) in exactly the windows that hold one of its
 * dates, once the indexes have caught up; while they lag, every read shows it at most once and
 * only as committed (no duplicate, no ghost, no stale version).
 */
async function expectListed(eventId: string, expected: SpecialEventBody | undefined, windows: { startDate: string; endDate: string }[]) {
  for (const window of windows) {
    const wanted = expected?.dates.some((date) => date >= window.startDate && date <= window.endDate) ? [expected] : [];
    const found = await readUntilSettled(
      async () => (await listedIn(apiRetrying, window)).filter((event) => event.eventId === eventId),
      (listed) => isDeepStrictEqual(listed, wanted),
      (listed) => expect({ window, listed }).toEqual({ window, listed: listed.length === 0 ? [] : wanted }),
    );
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

describe('an event with a date for every day of a leap year, through the API', () => {
  test('is created, listed in every window of its year, replaced by 365 other dates, renamed and deleted', async () => {
    expect(LIMITS.maxDates).toBeGreaterThanOrEqual(366);
    const year = days(LEAP_YEAR, 366);
    const created = await apiRetrying<SpecialEventBody>('POST', '/special-events', {
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
    const replaced = await apiRetrying<SpecialEventBody>('PATCH', `/special-events/${eventId}`, { json: { dates: next } });
    expect(replaced.status).toBe(200);
    expect(replaced.headers.get('etag')).toBe('"2"');
    expect(replaced.body.dates).toEqual(next);
    expect(await storageProblems(eventId, replaced.body)).toEqual([]);
    const nextWindows = [...windows, ...monthWindows(LEAP_YEAR + 1)];
    await expectListed(eventId, replaced.body, nextWindows);

    const renamed = await apiRetrying<SpecialEventBody>('PATCH', `/special-events/${eventId}`, { json: { name: 'Renamed installation' } });
    expect(renamed.status).toBe(200);
    expect(renamed.body).toEqual({ ...replaced.body, name: 'Renamed installation' });
    expect(await storageProblems(eventId, renamed.body)).toEqual([]);
    await expectListed(eventId, renamed.body, monthWindows(LEAP_YEAR + 1));

    expect((await apiRetrying('DELETE', `/special-events/${eventId}`)).status).toBe(204);
    expect((await api('GET', `/special-events/${eventId}`)).status).toBe(404);
    expect(await storageProblems(eventId, undefined)).toEqual([]);
    await expectListed(eventId, undefined, monthWindows(LEAP_YEAR + 1));
  });

  test('366 dates are accepted and 367 are a 400 problem', async () => {
    const tooMany = [...days(LEAP_YEAR, 366), `${LEAP_YEAR + 1}-01-01`];
    const response = await apiRetrying('POST', '/special-events', {
      json: { name: 'Too long', location: 'Atrium', eventDescription: 'Too many days', dates: tooMany, price: 1 },
    });
    expect(response.status).toBe(400);
  });
});

describe('whole-year PATCHes of one event', () => {
  const year = LEAP_YEAR + 2;
  const patchBody = (i: number) => ({ name: `Raced year ${i}`, dates: days(year + (i % 2), 300, (i * 5) % 60) });

  test('20 sequential whole-year PATCHes all answer 200, one version each', async () => {
    const created = await apiRetrying<SpecialEventBody>('POST', '/special-events', {
      json: { name: 'Sequential year', location: 'Atrium', eventDescription: 'Replaced', dates: days(year, 365), price: 1 },
    });
    expect(created.status).toBe(201);
    let last = created.body;
    for (let i = 0; i < 20; i++) {
      const patched = await apiRetrying<SpecialEventBody>('PATCH', `/special-events/${created.body.eventId}`, { json: patchBody(i) });
      expect({ i, status: patched.status }).toEqual({ i, status: 200 });
      expect(patched.headers.get('etag')).toBe(`"${i + 2}"`);
      last = patched.body;
    }
    expect(await storageProblems(created.body.eventId, last)).toEqual([]);
    await expectListed(created.body.eventId, last, [...monthWindows(year), ...monthWindows(year + 1)]);
    expect((await apiRetrying('DELETE', `/special-events/${created.body.eventId}`)).status).toBe(204);
  });

  // A 503 says DynamoDB throttled or cancelled the write and nothing was written (it may do so at
  // any time); a 504 that the outcome is unknown (a commit on a busy machine can outlive its time
  // limit). Each request follows them as a client does, with its Idempotency-Key (apiRetrying);
  // what it answers then is asserted.
  const retried503 = <T>(method: 'PATCH' | 'DELETE', path: string, json?: unknown) =>
    apiRetrying<T>(method, path, json === undefined ? {} : { json }, { statuses: [503] });

  test.each([2, 4, 8, 16])(
    'a burst of %i concurrent whole-year PATCHes and a DELETE: at least one 200, losers 409 with Retry-After, no 503 once retried as told',
    async (n) => {
      const created = await apiRetrying<SpecialEventBody>('POST', '/special-events', {
        json: { name: 'Raced year', location: 'Atrium', eventDescription: 'Raced', dates: days(year, 365), price: 1 },
      });
      expect(created.status).toBe(201);
      const { eventId } = created.body;
      const patches = Array.from({ length: n }, (_, i) =>
        retried503<SpecialEventBody>('PATCH', `/special-events/${eventId}`, patchBody(i)),
      );
      // The DELETE goes in the middle of the burst; it may win, lose (409) or come after (404 for nothing).
      const deletion = new Promise((resolve) => setTimeout(resolve, 20)).then(() => retried503('DELETE', `/special-events/${eventId}`));
      const results = await Promise.all([...patches, deletion]);
      const statuses = results.map((result) => result.status);
      for (const status of statuses) expect([200, 204, 404, 409]).toContain(status);
      expect(statuses.filter((status) => status === 200 || status === 204).length).toBeGreaterThanOrEqual(1);
      for (const result of results.filter((r) => r.status === 409))
        expect(Number(result.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      const winners = results.filter((result) => result.status === 200);
      const versions = winners.map((result) => Number(JSON.parse(result.headers.get('etag') ?? '0')));
      // Winners were serialised: distinct versions.
      expect(new Set(versions).size).toBe(versions.length);
      const final = await api<SpecialEventBody>('GET', `/special-events/${eventId}`);
      const committed = final.status === 200 ? final.body : undefined;
      // The final state is the last answered 200 (highest version), or the DELETE's.
      if (committed) {
        const lastWinner = winners.sort(
          (a, b) => Number(JSON.parse(b.headers.get('etag') ?? '0')) - Number(JSON.parse(a.headers.get('etag') ?? '0')),
        )[0];
        expect(committed).toEqual(lastWinner?.body ?? created.body);
      } else {
        expect(statuses.at(-1)).toBe(204);
      }
      expect(await storageProblems(eventId, committed)).toEqual([]);
      await expectListed(eventId, committed, monthWindows(year));
      if (committed) expect((await apiRetrying('DELETE', `/special-events/${eventId}`)).status).toBe(204);
    },
  );
});

describe(`an event's dates fall in at most ${LIMITS.maxEventMonths} distinct months`, () => {
  test('49 months are a 400 problem naming the limit and suggesting a split, on create and on PATCH; nothing is written', async () => {
    const refused = await apiRetrying<{ detail: string; errors: { field: string; message: string }[] }>('POST', '/special-events', {
      json: {
        name: 'Too long a series',
        location: 'Archive',
        eventDescription: 'Monthly',
        dates: monthly(MANY_MONTHS_YEAR, 49, 15),
        price: 3,
      },
    });
    expect(refused.status).toBe(400);
    expect(refused.headers.get('content-type')).toBe('application/problem+json');
    expect(refused.body.detail).toContain(`at most ${LIMITS.maxEventMonths} distinct months (maxEventMonths)`);
    expect(refused.body.detail).toContain('split the series');
    expect(refused.body.errors.map((error) => error.field)).toEqual(['dates']);
    expect(refused.body.errors[0]?.message).toContain('not 49');
    const created = await apiRetrying<SpecialEventBody>('POST', '/special-events', {
      json: {
        name: 'Four years of fifteenths',
        location: 'Archive',
        eventDescription: 'Monthly',
        dates: monthly(MANY_MONTHS_YEAR, 48, 15),
        price: 3,
      },
    });
    expect(created.status).toBe(201);
    const { eventId } = created.body;
    const patch = await apiRetrying('PATCH', `/special-events/${eventId}`, { json: { dates: monthly(MANY_MONTHS_YEAR, 49, 2) } });
    expect(patch.status).toBe(400);
    expect((await api<SpecialEventBody>('GET', `/special-events/${eventId}`)).headers.get('etag')).toBe('"1"');
    expect(await storageProblems(eventId, created.body)).toEqual([]);
    expect((await apiRetrying('DELETE', `/special-events/${eventId}`)).status).toBe(204);
  });

  test('48 months are created, listed, replaced by 48 other months, renamed, read mid-month and deleted through the API', async () => {
    const dates = monthly(MANY_MONTHS_YEAR, 48, 15);
    const created = await apiRetrying<SpecialEventBody>('POST', '/special-events', {
      json: { name: 'Four years of fifteenths', location: 'Archive', eventDescription: 'Monthly', dates, price: 3 },
    });
    expect(created.status).toBe(201);
    const { eventId } = created.body;
    expect(await storageProblems(eventId, created.body)).toEqual([]);
    const windows = [
      ...yearWindows(MANY_MONTHS_YEAR, 9),
      // Ranges starting mid-month: the first month's item has its first date before startDate.
      { startDate: `${MANY_MONTHS_YEAR}-03-10`, endDate: `${MANY_MONTHS_YEAR}-03-20` },
      { startDate: `${MANY_MONTHS_YEAR}-03-16`, endDate: `${MANY_MONTHS_YEAR}-04-14` },
    ];
    await expectListed(eventId, created.body, windows);
    // 48 months later: every month item deleted and another put, the base item rewritten.
    const later = monthly(MANY_MONTHS_YEAR + 4, 48, 2);
    const moved = await apiRetrying<SpecialEventBody>('PATCH', `/special-events/${eventId}`, {
      json: { name: 'Moved series', dates: later },
    });
    expect(moved.status).toBe(200);
    expect(moved.headers.get('etag')).toBe('"2"');
    await expectListed(eventId, moved.body, windows);
    expect(await storageProblems(eventId, moved.body)).toEqual([]);
    expect((await apiRetrying('DELETE', `/special-events/${eventId}`)).status).toBe(204);
    await expectListed(eventId, undefined, windows);
    expect(await storageProblems(eventId, undefined)).toEqual([]);
  });
});

describe(`every write of a ${LIMITS.maxEventMonths}-month event is one TransactWriteItems (the store, commands counted)`, () => {
  let client: ReturnType<typeof localClient>;
  let store: EventsStore;
  const sent: string[] = [];

  beforeAll(() => {
    client = localClient(testEnvironment().dynamodbEndpoint);
    client.middlewareStack.add(
      (next, context) => (args) => {
        sent.push(context.commandName ?? '?');
        return next(args);
      },
      { step: 'initialize', name: 'countCommands' },
    );
    store = new EventsStore(createDocumentClient(client), testEnvironment().tableName, LOCAL_TABLE_NAMES.idempotency);
  });

  afterAll(() => client.destroy());

  test('create, full replacement (48 deletes and 48 puts, with an idempotency record and the change item: 99 actions) and delete send one write call each', async () => {
    sent.length = 0;
    const { event } = await store.createEvent({
      name: 'Counted',
      location: 'Wing',
      eventDescription: 'Monthly',
      dates: monthly(MANY_MONTHS_YEAR + 10, 48, 5),
      price: 1,
    });
    expect(sent).toEqual(['TransactWriteItemsCommand']);
    sent.length = 0;
    const replaced = await store.updateEvent(event.eventId, { name: 'Counted again', dates: monthly(MANY_MONTHS_YEAR + 14, 48, 6) }, 1, {
      principal: 'counter',
      key: `count-${event.eventId}`,
    });
    expect(sent).toEqual(['GetItemCommand', 'TransactWriteItemsCommand']);
    expect(await storageProblems(event.eventId, replaced.event)).toEqual([]);
    sent.length = 0;
    await store.updateEvent(event.eventId, { price: 2 });
    expect(sent).toEqual(['GetItemCommand', 'TransactWriteItemsCommand']);
    sent.length = 0;
    await store.deleteEvent(event.eventId);
    expect(sent).toEqual(['GetItemCommand', 'TransactWriteItemsCommand']);
    expect(await storageProblems(event.eventId, undefined)).toEqual([]);
  });
});

describe('a write of a 48-month event interrupted (fault proxy in front of DynamoDB Local)', () => {
  let proxy: FaultProxy;
  let store: EventsStore;
  let client: ReturnType<typeof localClient>;
  let nextDay = 1;
  const YEARS = 9;

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

  /** A fresh event with a date in each of 48 months (its own day of the month), and whole-year windows over its years. */
  async function manyMonthEvent(): Promise<{ event: SpecialEvent; windows: { startDate: string; endDate: string }[] }> {
    const input: NewSpecialEvent = {
      name: 'Monthly',
      location: 'Wing',
      eventDescription: 'A monthly talk',
      dates: monthly(MANY_MONTHS_YEAR + 20, 48, nextDay),
      price: 5,
    };
    nextDay += 1;
    const { event } = await store.createEvent(input);
    return { event, windows: yearWindows(MANY_MONTHS_YEAR + 20, YEARS) };
  }

  const asBody = (event: SpecialEvent): SpecialEventBody => event;
  /** 48 months of other dates: 48 month items put and 48 deleted in the one transaction. */
  const replacement = () => ({ name: 'Moved monthly', dates: monthly(MANY_MONTHS_YEAR + 24, 48, 28) });

  test.each([
    ['with a server error', { fault: 'internal-server-error', operation: 'TransactWriteItems' }],
    ['with the connection reset', { fault: 'connection-reset', operation: 'TransactWriteItems' }],
  ] as const)('a replacement whose commit fails %s leaves the event as it was, and the next write goes through', async (_point, rule) => {
    const { event, windows } = await manyMonthEvent();
    proxy.inject(rule);
    await expect(store.updateEvent(event.eventId, replacement())).rejects.toThrow();
    proxy.clear();
    expect(await store.getEvent(event.eventId)).toEqual({ event, version: 1 });
    expect(await storageProblems(event.eventId, asBody(event))).toEqual([]);
    await expectListed(event.eventId, asBody(event), windows);
    const { event: moved } = await store.updateEvent(event.eventId, replacement());
    await expectListed(event.eventId, asBody(moved), windows);
    expect(await storageProblems(event.eventId, asBody(moved))).toEqual([]);
    await store.deleteEvent(event.eventId);
  });

  test('a commit whose response is lost is retried by the SDK into one version', async () => {
    const { event, windows } = await manyMonthEvent();
    proxy.inject({ fault: 'lost-response', operation: 'TransactWriteItems', times: 1 });
    const updated = await store.updateEvent(event.eventId, replacement());
    expect(updated.version).toBe(2);
    expect(await store.getEvent(event.eventId)).toEqual(updated);
    await expectListed(event.eventId, asBody(updated.event), windows);
    expect(await storageProblems(event.eventId, asBody(updated.event))).toEqual([]);
    await store.deleteEvent(event.eventId);
  });
});
