// The data layer against DynamoDB Local, in a table of its own.
import { randomUUID } from 'node:crypto';
import { QueryCommand, ScanCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { addDays } from '../../functions/shared/calendar-dates.ts';
import { createDocumentClient } from '../../functions/shared/dynamodb-client.ts';
import {
  EventNotFoundError,
  EventsStore,
  EventVersionMismatchError,
  IdempotencyKeyReusedError,
} from '../../functions/shared/events-store.ts';
import type { NewSpecialEvent } from '../../functions/shared/event-schema.ts';
import { eventsTable, idempotencyTable } from '../../functions/shared/table-definition.ts';
import { ensureTable, localClient } from '../../lib/local/dynamodb-local.ts';
import { testEnvironment } from '../support/test-environment.ts';

const tableName = `events-store-${randomUUID()}`;
const client = localClient(testEnvironment().dynamodbEndpoint);
const documentClient = createDocumentClient(client);
const idempotencyTableName = `idempotency-${randomUUID()}`;
const store = new EventsStore(documentClient, tableName, idempotencyTableName);

function newEvent(fields: Partial<NewSpecialEvent> = {}): NewSpecialEvent {
  return { name: 'Lecture', location: 'Auditorium', eventDescription: 'A talk.', dates: ['2030-03-10'], price: 10, ...fields };
}

/** Every item stored under the event's partition key: the base item and its date items. */
async function itemsOf(eventId: string) {
  const { Items = [] } = await documentClient.send(
    new QueryCommand({ TableName: tableName, KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': `EVENT#${eventId}` } }),
  );
  return Items.map((item) => String(item.sk)).sort();
}

beforeAll(async () => {
  await ensureTable(client, tableName, eventsTable);
  await ensureTable(client, idempotencyTableName, idempotencyTable);
});

afterAll(() => client.destroy());

describe('events store', () => {
  test('a created event is stored with one date item per date and read back whole', async () => {
    const { event, version } = await store.createEvent(newEvent({ dates: ['2030-03-10', '2030-03-12'] }));
    expect(version).toBe(1);
    expect(await store.getEvent(event.eventId)).toEqual({ event, version: 1 });
    expect(await itemsOf(event.eventId)).toEqual(['DATE#2030-03-10#Lecture', 'DATE#2030-03-12#Lecture', 'EVENT']);
  });

  test('an update replaces the date items atomically and bumps the version', async () => {
    const { event } = await store.createEvent(newEvent({ dates: ['2030-04-01', '2030-04-02'] }));
    const updated = await store.updateEvent(event.eventId, { dates: ['2030-04-02', '2030-05-01'], price: 12.5 });
    expect(updated).toEqual({ event: { ...event, dates: ['2030-04-02', '2030-05-01'], price: 12.5 }, version: 2 });
    expect(await itemsOf(event.eventId)).toEqual(['DATE#2030-04-02#Lecture', 'DATE#2030-05-01#Lecture', 'EVENT']);
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

  test('a delete removes the event and all its date items', async () => {
    const { event } = await store.createEvent(newEvent({ dates: ['2030-06-01', '2030-06-02', '2030-06-03'] }));
    await store.deleteEvent(event.eventId);
    expect(await store.getEvent(event.eventId)).toBeUndefined();
    expect(await itemsOf(event.eventId)).toEqual([]);
  });

  test('an event of 49 dates can be renamed with all its dates replaced in one transaction', async () => {
    const dates = Array.from({ length: 49 }, (_, i) => addDays('2031-01-01', i));
    const replacement = Array.from({ length: 49 }, (_, i) => addDays('2032-01-01', i));
    const { event } = await store.createEvent(newEvent({ dates }));
    await store.updateEvent(event.eventId, { name: 'Renamed', dates: replacement });
    expect(await itemsOf(event.eventId)).toEqual(['EVENT', ...replacement.map((d) => `DATE#${d}#Renamed`)].sort());
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
      const { events } = await store.listEvents({ startDate: `${year}-02-01`, endDate: `${year}-02-05`, page: 1, limit: 10 });
      expect(events.map((e) => e.name)).toEqual(['Apple', 'Multi', 'Zebra', 'Later']);
    });

    test('both ends of the range are inclusive and a range can span months', async () => {
      const { events } = await store.listEvents({ startDate: `${year}-01-30`, endDate: `${year}-02-01`, page: 1, limit: 10 });
      expect(events.map((e) => e.name)).toEqual(['Before', 'Multi', 'Apple', 'Zebra']);
    });

    test('pages follow each other without gaps or duplicates, and a page past the end is empty', async () => {
      const range = { startDate: `${year}-01-01`, endDate: `${year}-12-31` };
      const all = (await store.listEvents({ ...range, page: 1, limit: 30 })).events.map((e) => e.eventId);
      const pages = [];
      for (let page = 1; page <= 4; page++) pages.push((await store.listEvents({ ...range, page, limit: 2 })).events.map((e) => e.eventId));
      expect(pages.flat()).toEqual(all);
      expect(all).toHaveLength(6);
      expect(pages[3]).toEqual([]);
    });

    test('an event moved out of the range no longer appears, and reports its read capacity', async () => {
      const moved = (await store.createEvent(newEvent({ name: 'Moving', dates: [`${year}-03-03`] }))).event.eventId;
      const range = { startDate: `${year}-03-01`, endDate: `${year}-03-05`, page: 1, limit: 10 };
      const before = await store.listEvents(range);
      expect(before.events.map((e) => e.eventId)).toEqual([moved]);
      expect(before.consumedReadCapacity).toBeGreaterThan(0);
      await store.updateEvent(moved, { dates: [`${year}-04-03`] });
      expect((await store.listEvents(range)).events).toEqual([]);
    });

    test('a stale index entry of a deleted event is never returned', async () => {
      // DynamoDB Local updates its index synchronously; a lagging real GSI is simulated by
      // writing the base item away behind the index's back.
      const ghost = (await store.createEvent(newEvent({ name: 'Ghost', dates: [`${year}-05-05`] }))).event.eventId;
      const { DeleteCommand } = await import('@aws-sdk/lib-dynamodb');
      await documentClient.send(new DeleteCommand({ TableName: tableName, Key: { pk: `EVENT#${ghost}`, sk: 'EVENT' } }));
      const { events } = await store.listEvents({ startDate: `${year}-05-01`, endDate: `${year}-05-31`, page: 1, limit: 10 });
      expect(events).toEqual([]);
    });
  });

  test('concurrent updates and a delete leave either nothing or one consistent event, never orphan date items', async () => {
    const { event } = await store.createEvent(newEvent({ dates: ['2045-01-01'] }));
    const updates = Array.from({ length: 10 }, (_, i) =>
      store.updateEvent(event.eventId, { dates: [`2045-02-${String(i + 1).padStart(2, '0')}`] }),
    );
    const results = await Promise.allSettled([...updates, store.deleteEvent(event.eventId)]);
    for (const result of results) {
      if (result.status === 'rejected') expect(['EventNotFoundError', 'ConcurrentModificationError']).toContain((result.reason as Error).name);
    }
    const remaining = await itemsOf(event.eventId);
    const stored = await store.getEvent(event.eventId);
    if (stored) expect(remaining).toEqual([...stored.event.dates.map((d) => `DATE#${d}#Lecture`), 'EVENT'].sort());
    else expect(remaining).toEqual([]);
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
    for (const item of Items.filter((candidate) => (candidate.event as { eventId: string }).eventId === first.event.eventId)) {
      await documentClient.send(
        new UpdateCommand({ TableName: idempotencyTableName, Key: { id: item.id }, UpdateExpression: 'SET expiration = :past', ExpressionAttributeValues: { ':past': 1 } }),
      );
    }
    const second = await store.createEvent(newEvent({ name: 'Expired again' }), key);
    expect(second.event.eventId).not.toBe(first.event.eventId);
    expect(second.event.name).toBe('Expired again');
  });
});
