// The data layer against DynamoDB Local, in a table of its own.
import { randomUUID } from 'node:crypto';
import { QueryCommand, ScanCommand, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { addDays } from '../../functions/events/calendar-dates.ts';
import { createDocumentClient } from '../../functions/store/dynamodb-client.ts';
import {
  ConcurrentModificationError,
  EventNotFoundError,
  EventsReader,
  EventsStore,
  EventVersionMismatchError,
  IdempotencyKeyReusedError,
  StoreBusyError,
  WriteOutcomeUnknownError,
} from '../../functions/store/events-store.ts';
import { TooManyMonthsError } from '../../functions/store/store-errors.ts';
import { fenceUpdate, versionCondition } from '../../functions/store/event-items.ts';
import { toProblem } from '../../functions/events/problems.ts';
import type { NewSpecialEvent } from '../../functions/events/event-schema.ts';
import { eventsTable, idempotencyTable, keys } from '../../functions/store/table-definition.ts';
import { localClient } from '../../lib/local/dynamodb-local.ts';
import { ensureTable } from '../../lib/local/local-tables.ts';
import { testEnvironment } from '../support/test-environment.ts';

const tableName = `events-store-${randomUUID()}`;
const client = localClient(testEnvironment().dynamodbEndpoint);
const documentClient = createDocumentClient(client);
const idempotencyTableName = `idempotency-${randomUUID()}`;
const store = new EventsStore(documentClient, tableName, idempotencyTableName);
const reader = new EventsReader(documentClient, tableName);

function newEvent(fields: Partial<NewSpecialEvent> = {}): NewSpecialEvent {
  return { name: 'Lecture', location: 'Auditorium', eventDescription: 'A talk.', dates: ['2030-03-10'], price: 10, ...fields };
}

/** The sort keys of every item stored under the event's partition key: the base item and its month items. */
async function itemsOf(eventId: string) {
  const { Items = [] } = await documentClient.send(
    new QueryCommand({
      TableName: tableName,
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: { ':pk': `EVENT#${eventId}` },
    }),
  );
  return Items.map((item) => String(item.sk)).sort();
}

/** The month item sort keys of `dates`, and the base item's. */
const itemsFor = (dates: string[]) => ['EVENT', ...new Set(dates.map((date) => `MONTH#${date.slice(0, 7)}`))].sort();

beforeAll(async () => {
  await ensureTable(client, tableName, eventsTable);
  await ensureTable(client, idempotencyTableName, idempotencyTable);
});

afterAll(() => client.destroy());

/** A local port nothing listens on: connections to it are refused. */
async function closedPort(): Promise<number> {
  const { createServer } = await import('node:net');
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe('events store', () => {
  test('a created event is stored with one index item per month and read back whole', async () => {
    const { event, version } = await store.createEvent(newEvent({ dates: ['2030-03-10', '2030-03-12'] }));
    expect(version).toBe(1);
    expect(await store.getEvent(event.eventId)).toEqual({ event, version: 1 });
    expect(await itemsOf(event.eventId)).toEqual(['EVENT', 'MONTH#2030-03']);
  });

  test('an update replaces the month items atomically and bumps the version', async () => {
    const { event } = await store.createEvent(newEvent({ dates: ['2030-04-01', '2030-04-02'] }));
    const updated = await store.updateEvent(event.eventId, { dates: ['2030-04-02', '2030-05-01'], price: 12.5 });
    expect(updated).toEqual({ event: { ...event, dates: ['2030-04-02', '2030-05-01'], price: 12.5 }, version: 2 });
    expect(await itemsOf(event.eventId)).toEqual(['EVENT', 'MONTH#2030-04', 'MONTH#2030-05']);
  });

  test('DynamoDB Local honours ClientRequestToken: a resent transaction applies once, even when the copies race', async () => {
    const { event } = await store.createEvent(newEvent());
    const bump = () =>
      documentClient.send(
        new TransactWriteCommand({
          ClientRequestToken: `token-${event.eventId}`.slice(0, 36),
          TransactItems: [
            {
              Update: {
                TableName: tableName,
                Key: { pk: `EVENT#${event.eventId}`, sk: 'EVENT' },
                UpdateExpression: 'SET version = version + :one',
                ExpressionAttributeValues: { ':one': 1 },
              },
            },
          ],
        }),
      );
    await Promise.all([bump(), bump(), bump()]);
    await bump();
    expect((await store.getEvent(event.eventId))?.version).toBe(2);
  });

  test('a fence keeps its write out after another write is fenced at the same version', async () => {
    // Two writes read version 1, their commits' outcomes were unknown, and each was fenced in turn:
    // a late copy of the first commit must still fail (one fence id per item would let it apply).
    const { event } = await store.createEvent(newEvent());
    const [first, second, unfenced] = [randomUUID(), randomUUID(), randomUUID()];
    // ADD to a string set keeps its members; contains() is false where the attribute is absent
    // (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Expressions.UpdateExpressions.html#Expressions.UpdateExpressions.ADD,
    // https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Expressions.OperatorsAndFunctions.html#Expressions.OperatorsAndFunctions.Functions).
    for (const writeId of [first, second]) await documentClient.send(new UpdateCommand(fenceUpdate(tableName, event.eventId, 1, writeId)));
    const commit = (writeId: string) => {
      const { ConditionExpression, ExpressionAttributeValues } = versionCondition(1, writeId);
      return documentClient.send(
        new TransactWriteCommand({
          TransactItems: [
            {
              Update: {
                TableName: tableName,
                Key: keys.event(event.eventId),
                UpdateExpression: 'SET version = :next, lastWriteId = :writeId',
                ConditionExpression,
                ExpressionAttributeValues: { ...ExpressionAttributeValues, ':next': 2 },
              },
            },
          ],
        }),
      );
    };
    for (const writeId of [first, second]) await expect(commit(writeId)).rejects.toThrow(/ConditionalCheckFailed/);
    expect((await store.getEvent(event.eventId))?.version).toBe(1);
    await commit(unfenced);
    expect((await store.getEvent(event.eventId))?.version).toBe(2);
  });

  test('an update with a stale expected version fails and changes nothing', async () => {
    const { event } = await store.createEvent(newEvent());
    await store.updateEvent(event.eventId, { price: 11 });
    await expect(store.updateEvent(event.eventId, { price: 99 }, 1)).rejects.toBeInstanceOf(EventVersionMismatchError);
    expect((await store.getEvent(event.eventId))?.event.price).toBe(11);
  });

  test('updating or deleting an unknown event fails and creates nothing', async () => {
    const eventId = randomUUID();
    await expect(store.updateEvent(eventId, { price: 1 })).rejects.toBeInstanceOf(EventNotFoundError);
    await expect(store.deleteEvent(eventId)).rejects.toBeInstanceOf(EventNotFoundError);
    expect(await itemsOf(eventId)).toEqual([]);
  });

  test('a delete removes the event and all its month items', async () => {
    const { event } = await store.createEvent(newEvent({ dates: ['2030-06-01', '2030-06-02', '2030-06-03'] }));
    await store.deleteEvent(event.eventId);
    expect(await store.getEvent(event.eventId)).toBeUndefined();
    expect(await itemsOf(event.eventId)).toEqual([]);
  });

  test('an event with dates in 48 months is renamed with all its dates replaced in one transaction; 49 months are refused with the named limit', async () => {
    const monthly = (year: number, count = 48) =>
      Array.from({ length: count }, (_, i) => new Date(Date.UTC(year, i, 1)).toISOString().slice(0, 10));
    const { event } = await store.createEvent(newEvent({ dates: monthly(2050) }));
    const renamed = await store.updateEvent(event.eventId, { name: 'Renamed', dates: monthly(2060) });
    expect(await itemsOf(event.eventId)).toEqual(itemsFor(monthly(2060)));
    expect(renamed.version).toBe(2);
    const tooMany = store.updateEvent(event.eventId, { dates: monthly(2070, 49) });
    await expect(tooMany).rejects.toBeInstanceOf(TooManyMonthsError);
    await expect(tooMany).rejects.toMatchObject({
      problem: { status: 400, errors: [{ field: 'dates' }] },
      message: expect.stringContaining('maxEventMonths') as unknown,
    });
    await expect(store.createEvent(newEvent({ dates: monthly(2070, 49) }))).rejects.toBeInstanceOf(TooManyMonthsError);
    expect(await store.getEvent(event.eventId)).toEqual(renamed);
  });

  test('a whole year of dates is 12 month items; a change of one month rewrites only that month', async () => {
    const year = Array.from({ length: 365 }, (_, i) => addDays('2033-01-01', i));
    const { event } = await store.createEvent(newEvent({ dates: year }));
    const monthItems = async () => {
      const { Items = [] } = await documentClient.send(
        new QueryCommand({
          TableName: tableName,
          KeyConditionExpression: 'pk = :pk',
          ExpressionAttributeValues: { ':pk': `EVENT#${event.eventId}` },
        }),
      );
      return new Map(Items.filter((item) => item.sk !== 'EVENT').map((item) => [String(item.sk), JSON.stringify(item)]));
    };
    const before = await monthItems();
    await store.updateEvent(event.eventId, { dates: year.filter((date) => date !== '2033-06-15') });
    const after = await monthItems();
    expect(after.size).toBe(12);
    expect([...after].filter(([sk, item]) => before.get(sk) !== item).map(([sk]) => sk)).toEqual(['MONTH#2033-06']);
  });

  test('a version at Number.MAX_SAFE_INTEGER is refused a further change (409), not stepped past; an import beyond it is refused', async () => {
    const { event } = await store.createEvent(newEvent({ dates: ['2034-01-01'] }));
    await documentClient.send(
      new UpdateCommand({
        TableName: tableName,
        Key: { pk: `EVENT#${event.eventId}`, sk: 'EVENT' },
        UpdateExpression: 'SET version = :v',
        ExpressionAttributeValues: { ':v': Number.MAX_SAFE_INTEGER },
      }),
    );
    await expect(store.updateEvent(event.eventId, { price: 1 })).rejects.toMatchObject({
      name: 'VersionLimitError',
      problem: { status: 409 },
    });
    expect((await store.getEvent(event.eventId))?.version).toBe(Number.MAX_SAFE_INTEGER);
    // An If-Match past the bound matches no stored version: a 412.
    await expect(store.updateEvent(event.eventId, { price: 1 }, Number.MAX_SAFE_INTEGER + 1)).rejects.toBeInstanceOf(
      EventVersionMismatchError,
    );
    await store.deleteEvent(event.eventId, Number.MAX_SAFE_INTEGER);
    expect(await store.getEvent(event.eventId)).toBeUndefined();
    for (const version of [Number.MAX_SAFE_INTEGER + 1, 1e20, 0, 1.5]) {
      await expect(store.importEvent({ event: { ...event, eventId: randomUUID() }, version })).rejects.toThrow(
        /the version must be a whole number from 1 to 9007199254740991/,
      );
    }
  });

  test('a write to a DynamoDB that refuses connections is a 503 with Retry-After (nothing can have been written), never 504', async () => {
    const refused = new EventsStore(
      createDocumentClient(localClient(`http://127.0.0.1:${await closedPort()}`)),
      tableName,
      idempotencyTableName,
    );
    for (const write of [
      () => refused.createEvent(newEvent()),
      () => refused.createEvent(newEvent(), { principal: 'p', key: randomUUID() }),
    ]) {
      const error = await write().then(
        () => undefined,
        (caught: unknown) => caught,
      );
      expect(error).toBeInstanceOf(StoreBusyError);
      const answer = toProblem(error);
      expect(answer.problem.status).toBe(503);
      expect(answer.headers['Retry-After']).toBe('1');
    }
    const read = await refused.updateEvent(randomUUID(), { price: 1 }).then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(toProblem(read).problem.status).toBe(503);
  });

  describe('listing by date', () => {
    const year = 2040;

    beforeAll(async () => {
      const create = (name: string, dates: string[]) => store.createEvent(newEvent({ name, dates }));
      await create('Before', [`${year}-01-30`]);
      await create('Multi', [`${year}-01-31`, `${year}-02-01`, `${year}-02-03`]);
      await create('Zebra', [`${year}-02-01`]);
      await create('Apple', [`${year}-02-01`]);
      await create('Later', [`${year}-02-05`]);
      await create('After', [`${year}-02-10`]);
    });

    test('returns events with a date in the range once each, by first date in range, then name', async () => {
      const { events } = await reader.listEvents({ startDate: `${year}-02-01`, endDate: `${year}-02-05`, page: 1, limit: 10 });
      expect(events.map((e) => e.name)).toEqual(['Apple', 'Multi', 'Zebra', 'Later']);
    });

    test('both ends of the range are inclusive and a range can span months', async () => {
      const { events } = await reader.listEvents({ startDate: `${year}-01-30`, endDate: `${year}-02-01`, page: 1, limit: 10 });
      expect(events.map((e) => e.name)).toEqual(['Before', 'Multi', 'Apple', 'Zebra']);
    });

    test('pages follow each other without gaps or duplicates, and a page past the end is empty', async () => {
      const range = { startDate: `${year}-01-01`, endDate: `${year}-12-31` };
      const all = (await reader.listEvents({ ...range, page: 1, limit: 30 })).events.map((e) => e.eventId);
      const pages = [];
      for (let page = 1; page <= 4; page++)
        pages.push((await reader.listEvents({ ...range, page, limit: 2 })).events.map((e) => e.eventId));
      expect(pages.flat()).toEqual(all);
      expect(all).toHaveLength(6);
      expect(pages[3]).toEqual([]);
    });

    test('a range starting mid-month places an event whose first date in the month is before it by its first date in the range', async () => {
      await store.createEvent(newEvent({ name: 'Early and late', dates: [`${year}-06-01`, `${year}-06-20`] }));
      await store.createEvent(newEvent({ name: 'Middle', dates: [`${year}-06-15`] }));
      await store.createEvent(newEvent({ name: 'Only early', dates: [`${year}-06-02`] }));
      await store.createEvent(newEvent({ name: 'July', dates: [`${year}-07-01`] }));
      const { events } = await reader.listEvents({ startDate: `${year}-06-10`, endDate: `${year}-07-05`, page: 1, limit: 10 });
      expect(events.map((e) => e.name)).toEqual(['Middle', 'Early and late', 'July']);
      const paged = [];
      for (let page = 1; page <= 3; page++)
        paged.push(
          ...(await reader.listEvents({ startDate: `${year}-06-10`, endDate: `${year}-07-05`, page, limit: 1 })).events.map((e) => e.name),
        );
      expect(paged).toEqual(['Middle', 'Early and late', 'July']);
    });

    test('an event moved out of the range no longer appears, and reports its read capacity', async () => {
      const moved = (await store.createEvent(newEvent({ name: 'Moving', dates: [`${year}-03-03`] }))).event.eventId;
      const range = { startDate: `${year}-03-01`, endDate: `${year}-03-05`, page: 1, limit: 10 };
      const before = await reader.listEvents(range);
      expect(before.events.map((e) => e.eventId)).toEqual([moved]);
      expect(before.consumedReadCapacity).toBeGreaterThan(0);
      await store.updateEvent(moved, { dates: [`${year}-04-03`] });
      expect((await reader.listEvents(range)).events).toEqual([]);
    });

    test('a stale index entry of a deleted event is never returned', async () => {
      // DynamoDB Local updates its index synchronously; a lagging real GSI is simulated by
      // writing the base item away behind the index's back.
      const ghost = (await store.createEvent(newEvent({ name: 'Ghost', dates: [`${year}-05-05`] }))).event.eventId;
      const { DeleteCommand } = await import('@aws-sdk/lib-dynamodb');
      await documentClient.send(new DeleteCommand({ TableName: tableName, Key: { pk: `EVENT#${ghost}`, sk: 'EVENT' } }));
      const { events } = await reader.listEvents({ startDate: `${year}-05-01`, endDate: `${year}-05-31`, page: 1, limit: 10 });
      expect(events).toEqual([]);
    });
  });

  describe('listing a range that starts mid-month (byMonth from startDate, merged with byMonthEnd)', () => {
    const month = '2041-09';
    const day = (d: number) => `${month}-${String(d).padStart(2, '0')}`;
    const window = { startDate: day(10), endDate: '2041-10-05' };
    const created: { name: string; eventId: string; dates: string[] }[] = [];
    const create = async (name: string, dates: string[]) => {
      const { event } = await store.createEvent(newEvent({ name, dates }));
      created.push({ name, eventId: event.eventId, dates: event.dates });
    };
    /** The list's order computed from the events themselves: first date in range, then name, then id, bytewise. */
    const expectedOrder = (range: { startDate: string; endDate: string }) =>
      created
        .map((event) => ({ event, first: event.dates.find((date) => date >= range.startDate && date <= range.endDate) }))
        .filter((candidate) => candidate.first !== undefined)
        .map(({ event, first }) => ({ name: event.name, order: Buffer.from(`${first}\u0000${event.name}\u0000${event.eventId}`) }))
        .sort((a, b) => Buffer.compare(a.order, b.order))
        .map(({ name }) => name);
    const pagedNames = async (range: { startDate: string; endDate: string }, limit: number) => {
      const names: string[] = [];
      for (let page = 1; ; page++) {
        const { events } = await reader.listEvents({ ...range, page, limit });
        names.push(...events.map((event) => event.name));
        if (events.length < limit) return names;
      }
    };

    beforeAll(async () => {
      await create('Single early', [day(3)]); // one date, before startDate: never listed
      await create('Single on S', [day(10)]);
      await create('Single mid', [day(14)]);
      await create('Straddle A', [day(2), day(12)]); // first date before S, listed at the 12th
      await create('Straddle B', [day(5), day(10)]); // last date on S
      await create('Jump over', [day(1), day(30)]); // running on S, next date the 30th: outside a window ending the 20th
      await create('Ended', [day(1), day(9)]); // last date the day before S
      await create('Weekly', [day(4), day(11), day(18), day(25)]);
      await create('Into October', [day(8), '2041-10-02']); // one date in September: not in byMonthEnd
      await create('Aardvark', [day(12)]);
      await create('Zulu run', [day(1), day(12)]);
      await create('\u00c9clair run', [day(3), day(12)]); // É: bytes 0xC3 0x89, after every ASCII name
      await create('\u00c9mile', [day(12)]);
    });

    test('events still running on startDate are placed by their first date in the range, in DynamoDB byte order', async () => {
      const expected = [
        'Single on S',
        'Straddle B',
        'Weekly',
        'Aardvark',
        'Straddle A',
        'Zulu run',
        '\u00c9clair run',
        '\u00c9mile',
        'Single mid',
        'Jump over',
        'Into October',
      ];
      expect(expectedOrder(window)).toEqual(expected);
      expect((await reader.listEvents({ ...window, page: 1, limit: 50 })).events.map((event) => event.name)).toEqual(expected);
      const withinMonth = { startDate: day(10), endDate: day(20) };
      expect((await reader.listEvents({ ...withinMonth, page: 1, limit: 50 })).events.map((event) => event.name)).toEqual(
        expectedOrder(withinMonth),
      );
      expect(expectedOrder(withinMonth)).not.toContain('Jump over');
    });

    test('pages of every size follow each other without gaps or duplicates', async () => {
      for (const limit of [1, 2, 3, 4, 7]) expect(await pagedNames(window, limit)).toEqual(expectedOrder(window));
    });

    test('the merge holds across the pages of the byMonth query (more entries from startDate than one query reads)', async () => {
      for (let i = 0; i < 40; i++) await create(`Bulk ${String(i).padStart(2, '0')}`, [day(15 + (i % 5))]);
      for (let i = 0; i < 12; i++) await create(`Run ${String(i).padStart(2, '0')}`, [day(1 + (i % 8)), day(15 + (i % 6)), day(28)]);
      const expected = expectedOrder(window);
      expect(expected).toHaveLength(11 + 40 + 12);
      expect((await reader.listEvents({ ...window, page: 1, limit: 100 })).events.map((event) => event.name)).toEqual(expected);
      for (const limit of [5, 11, 25]) expect(await pagedNames(window, limit)).toEqual(expected);
    });

    test('single-date events before startDate cost the list nothing: the month is not read from its 1st', async () => {
      const range = { ...window, page: 1, limit: 5 };
      const before = await reader.listEvents(range);
      for (let i = 0; i < 100; i++) await create(`Early single ${i}`, [day(1 + (i % 9))]);
      const after = await reader.listEvents(range);
      expect(after.events).toEqual(before.events);
      expect(after.consumedReadCapacity).toBe(before.consumedReadCapacity);
    });
  });

  test('concurrent updates and a delete leave either nothing or one consistent event, never orphan index items', async () => {
    const { event } = await store.createEvent(newEvent({ dates: ['2045-01-01'] }));
    const updates = Array.from({ length: 10 }, (_, i) =>
      store.updateEvent(event.eventId, { dates: [`2045-02-${String(i + 1).padStart(2, '0')}`] }),
    );
    const results = await Promise.allSettled([...updates, store.deleteEvent(event.eventId)]);
    for (const result of results) {
      if (result.status === 'rejected')
        expect(['EventNotFoundError', 'ConcurrentModificationError']).toContain((result.reason as Error).name);
    }
    const remaining = await itemsOf(event.eventId);
    const stored = await store.getEvent(event.eventId);
    if (stored) expect(remaining).toEqual(itemsFor(stored.event.dates));
    else expect(remaining).toEqual([]);
  });
});

describe('local tables', () => {
  test('a table from before the byMonthEnd index is refused, not served wrongly', async () => {
    const oldTable = `events-before-byMonthEnd-${randomUUID()}`;
    await ensureTable(client, oldTable, {
      ...eventsTable,
      globalSecondaryIndexes: eventsTable.globalSecondaryIndexes.filter((index) => index.indexName !== 'byMonthEnd'),
    });
    await expect(ensureTable(client, oldTable, eventsTable)).rejects.toThrow(/lacks the index byMonthEnd/);
  });
});

describe('idempotent PATCH and DELETE', () => {
  const scope = (request: unknown) => ({ principal: 'editor', key: randomUUID(), request });

  test('a repeated PATCH gets the first answer and writes nothing more; another request with the key is refused', async () => {
    const { event } = await store.createEvent(newEvent({ dates: ['2034-01-01'] }));
    const key = scope({ dates: ['2034-02-01'] });
    const first = await store.updateEvent(event.eventId, { dates: ['2034-02-01'] }, undefined, key);
    expect(await store.updateEvent(event.eventId, { dates: ['2034-02-01'] }, undefined, key)).toEqual(first);
    expect((await store.getEvent(event.eventId))?.version).toBe(2);
    await expect(
      store.updateEvent(event.eventId, { dates: ['2034-03-01'] }, undefined, { ...key, request: { dates: ['2034-03-01'] } }),
    ).rejects.toBeInstanceOf(IdempotencyKeyReusedError);
  });

  /**
   * A store whose every commit meets another writer that commits first, so its base condition
   * fails. With 'lost-answer' the commit's answer is lost too (a TimeoutError after DynamoDB
   * answered): its outcome is unknown. With 'conflict' DynamoDB cancels it for a conflicting
   * transaction instead of answering, which names no condition (DynamoDB Local cannot make either
   * fault on demand: it never cancels concurrent transactions). A conflict cancels the whole
   * transaction with CancellationReasons, one per item, the conflicting one TransactionConflict:
   * https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_TransactWriteItems.html
   */
  function racedStore(eventId: string, fault: 'condition' | 'lost-answer' | 'conflict') {
    const racedClient = localClient(testEnvironment().dynamodbEndpoint);
    racedClient.middlewareStack.add(
      (next, context) => async (args) => {
        if (context.commandName !== 'TransactWriteItemsCommand') return next(args);
        await documentClient.send(
          new UpdateCommand({
            TableName: tableName,
            Key: keys.event(eventId),
            UpdateExpression: 'ADD version :one',
            ExpressionAttributeValues: { ':one': 1 },
          }),
        );
        if (fault === 'conflict')
          throw Object.assign(new Error('Transaction cancelled'), {
            name: 'TransactionCanceledException',
            CancellationReasons: [{ Code: 'TransactionConflict' }, { Code: 'None' }, { Code: 'None' }],
          });
        const answer = await next(args).catch((error: unknown) => error);
        if (fault === 'lost-answer') throw Object.assign(new Error('The answer was lost'), { name: 'TimeoutError' });
        if (answer instanceof Error) throw answer;
        return answer as Awaited<ReturnType<typeof next>>;
      },
      // Inside the SDK's per-attempt recorder, so a fault counts as an attempt that reached DynamoDB.
      { step: 'deserialize', priority: 'low' },
    );
    return {
      store: new EventsStore(createDocumentClient(racedClient), tableName, idempotencyTableName),
      close: () => racedClient.destroy(),
    };
  }

  test('a repeat whose first attempt applied gets the first answer when it loses every race or has no time to write, never a refusal', async () => {
    const { event } = await store.createEvent(newEvent({ dates: ['2034-04-01'] }));
    const key = scope({ price: 7 });
    const first = await store.updateEvent(event.eventId, { price: 7 }, undefined, key);
    // A repeat that arrives with less time left than a commit needs: refused before it writes.
    const late = new EventsStore(documentClient, tableName, idempotencyTableName, undefined, Date.now() + 1_000);
    const stores = { condition: racedStore(event.eventId, 'condition'), conflict: racedStore(event.eventId, 'conflict') };
    try {
      // The commit fails on the base item and the record: the taken key decides at once.
      expect(await stores.condition.store.updateEvent(event.eventId, { price: 7 }, undefined, key)).toEqual(first);
      // Every try is cancelled for a conflict: after the last, the record decides, not a 409.
      expect(await stores.conflict.store.updateEvent(event.eventId, { price: 7 }, undefined, key)).toEqual(first);
      expect(await late.updateEvent(event.eventId, { price: 7 }, undefined, key)).toEqual(first);
      // Without a record to answer from, they are refusals (409, 503).
      await expect(stores.conflict.store.updateEvent(event.eventId, { price: 8 }, undefined, scope({ price: 8 }))).rejects.toBeInstanceOf(
        ConcurrentModificationError,
      );
      await expect(late.updateEvent(event.eventId, { price: 8 }, undefined, scope({ price: 8 }))).rejects.toBeInstanceOf(StoreBusyError);
    } finally {
      stores.condition.close();
      stores.conflict.close();
    }
  });

  test('a repeat whose commit outcome is unknown while another write commits gets the first answer: the record names the write that holds the key', async () => {
    const { event } = await store.createEvent(newEvent({ dates: ['2034-05-01'] }));
    const key = scope({ price: 9 });
    const first = await store.updateEvent(event.eventId, { price: 9 }, undefined, key);
    const raced = racedStore(event.eventId, 'lost-answer');
    try {
      // Sent again after a 504 (the fence's reads can outlast their 1.5 s on a loaded machine), as API.md tells a client to.
      let answer: unknown;
      for (let attempt = 1; attempt <= 3; attempt++) {
        answer = await raced.store.updateEvent(event.eventId, { price: 9 }, undefined, key).catch((error: unknown) => error);
        if (!(answer instanceof WriteOutcomeUnknownError)) break;
      }
      expect(answer).toEqual(first);
    } finally {
      raced.close();
    }
  });

  test('a repeated DELETE is a success again, not a 404', async () => {
    const { event } = await store.createEvent(newEvent());
    const key = scope({ eventId: 'any' });
    await store.deleteEvent(event.eventId, undefined, key);
    await expect(store.deleteEvent(event.eventId, undefined, key)).resolves.toBeUndefined();
    await expect(store.deleteEvent(event.eventId)).rejects.toBeInstanceOf(EventNotFoundError);
  });
});

describe('idempotent creation', () => {
  const scope = () => ({ principal: 'editor', key: randomUUID() });

  test('the key creates one event; a repeat returns it, another event with the key is refused', async () => {
    const key = scope();
    const first = await store.createEvent(newEvent({ name: 'Once' }), key);
    expect(await store.createEvent(newEvent({ name: 'Once' }), key)).toEqual(first);
    await expect(store.createEvent(newEvent({ name: 'Twice' }), key)).rejects.toBeInstanceOf(IdempotencyKeyReusedError);
    expect(await store.createEvent(newEvent({ name: 'Once' }), { ...key, principal: 'someone else' })).not.toEqual(first);
  });

  test('the record names neither the key nor the principal, and expires after the window', async () => {
    const key = { principal: 'editor-with-a-name', key: `secret-looking-key-${randomUUID()}` };
    const before = Math.floor(Date.now() / 1000);
    await store.createEvent(newEvent(), key);
    const { Items = [] } = await documentClient.send(new ScanCommand({ TableName: idempotencyTableName }));
    const text = JSON.stringify(Items);
    expect(text).not.toContain(key.key);
    expect(text).not.toContain(key.principal);
    const newest = Math.max(...Items.map((item) => Number(item.expiration)));
    expect(newest - before).toBeGreaterThanOrEqual(24 * 3600);
    expect(newest - before).toBeLessThanOrEqual(24 * 3600 + 60);
  });

  test('an expired record TTL has not removed yet counts as absent: the key creates a new event', async () => {
    const key = scope();
    const first = await store.createEvent(newEvent({ name: 'Expired' }), key);
    const { Items = [] } = await documentClient.send(new ScanCommand({ TableName: idempotencyTableName }));
    for (const item of Items.filter((candidate) => (candidate.event as { eventId: string } | undefined)?.eventId === first.event.eventId)) {
      await documentClient.send(
        new UpdateCommand({
          TableName: idempotencyTableName,
          Key: { id: item.id as unknown },
          UpdateExpression: 'SET expiration = :past',
          ExpressionAttributeValues: { ':past': 1 },
        }),
      );
    }
    const second = await store.createEvent(newEvent({ name: 'Expired again' }), key);
    expect(second.event.eventId).not.toBe(first.event.eventId);
    expect(second.event.name).toBe('Expired again');
  });
});
