// The data layer against DynamoDB Local, in a table of its own.
import { randomUUID } from 'node:crypto';
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { addDays } from '../../functions/shared/calendar-dates.ts';
import { createDocumentClient } from '../../functions/shared/dynamodb-client.ts';
import {
  EventNotFoundError,
  EventsStore,
  EventVersionMismatchError,
} from '../../functions/shared/events-store.ts';
import type { NewSpecialEvent } from '../../functions/shared/event-schema.ts';
import { eventsTable } from '../../functions/shared/table-definition.ts';
import { ensureTable, localClient } from '../../lib/local/dynamodb-local.ts';
import { testEnvironment } from '../support/test-environment.ts';

const tableName = `events-store-${randomUUID()}`;
const client = localClient(testEnvironment().dynamodbEndpoint);
const documentClient = createDocumentClient(client);
const store = new EventsStore(documentClient, tableName);

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
});

afterAll(() => client.destroy());

describe('events store', () => {
  test('a created event is stored with one date item per date and read back whole', async () => {
    const { event, version } = await store.createEvent(newEvent({ dates: ['2030-03-10', '2030-03-12'] }));
    expect(version).toBe(1);
    expect(await store.getEvent(event.eventId)).toEqual({ event, version: 1 });
    expect(await itemsOf(event.eventId)).toEqual(['DATE#2030-03-10', 'DATE#2030-03-12', 'EVENT']);
  });

  test('an update replaces the date items atomically and bumps the version', async () => {
    const { event } = await store.createEvent(newEvent({ dates: ['2030-04-01', '2030-04-02'] }));
    const updated = await store.updateEvent(event.eventId, { dates: ['2030-04-02', '2030-05-01'], price: 12.5 });
    expect(updated).toEqual({ event: { ...event, dates: ['2030-04-02', '2030-05-01'], price: 12.5 }, version: 2 });
    expect(await itemsOf(event.eventId)).toEqual(['DATE#2030-04-02', 'DATE#2030-05-01', 'EVENT']);
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

  test('an event with the maximum number of dates can have all its dates replaced in one write', async () => {
    const dates = Array.from({ length: 49 }, (_, i) => addDays('2031-01-01', i));
    const replacement = Array.from({ length: 49 }, (_, i) => addDays('2032-01-01', i));
    const { event } = await store.createEvent(newEvent({ dates }));
    await store.updateEvent(event.eventId, { name: 'Renamed', dates: replacement });
    expect(await itemsOf(event.eventId)).toEqual(['EVENT', ...replacement.map((d) => `DATE#${d}`)].sort());
  });

  describe('listing by date', () => {
    const year = 2040;
    let ids: Record<string, string>;

    beforeAll(async () => {
      const create = async (name: string, dates: string[]) => (await store.createEvent(newEvent({ name, dates }))).event.eventId;
      ids = {
        before: await create('Before', [`${year}-01-30`]),
        multi: await create('Multi', [`${year}-01-31`, `${year}-02-01`, `${year}-02-03`]),
        zebra: await create('Zebra', [`${year}-02-01`]),
        apple: await create('Apple', [`${year}-02-01`]),
        later: await create('Later', [`${year}-02-05`]),
        after: await create('After', [`${year}-02-10`]),
      };
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
    if (stored) expect(remaining).toEqual([...stored.event.dates.map((d) => `DATE#${d}`), 'EVENT'].sort());
    else expect(remaining).toEqual([]);
  });
});
