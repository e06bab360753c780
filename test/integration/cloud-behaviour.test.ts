// The store's guarantees where DynamoDB is less kind than DynamoDB Local: global secondary indexes
// that lag ("All reads from GSIs and streams are eventually consistent",
// https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/HowItWorks.ReadConsistency.html)
// and writes cancelled by transaction conflicts and throttling
// (https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_TransactWriteItems.html).
// The fault proxy (bench/support/fault-proxy.ts) models both in front of DynamoDB Local. What holds:
// no duplicate, no ghost, a committed event listed once the lag has passed, retries converge.
import { randomUUID } from 'node:crypto';
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { createDocumentClient } from '../../functions/store/dynamodb-client.ts';
import { EventsReader, EventsStore, type StoredEvent } from '../../functions/store/events-store.ts';
import type { NewSpecialEvent } from '../../functions/events/event-schema.ts';
import { toProblem } from '../../functions/events/problems.ts';
import { eventsTable, idempotencyTable, keys, MONTH_INDEX } from '../../functions/store/table-definition.ts';
import { localClient } from '../../lib/local/dynamodb-local.ts';
import { ensureTable } from '../../lib/local/local-tables.ts';
import { startFaultProxy, type FaultProxy } from '../../bench/support/fault-proxy.ts';
import { testEnvironment } from '../support/test-environment.ts';

/**
 * The indexes lag until a test lets them catch up, not for a fixed time: what a test reads while
 * they lag must not depend on how fast a loaded machine runs it (a read that came after a fixed
 * lag had passed saw part of the writes, and pages read across that moment repeated an event).
 */
const HELD_LAG_MS = 10 * 60_000;
const tableName = `cloud-behaviour-${randomUUID()}`;
const idempotencyTableName = `cloud-idempotency-${randomUUID()}`;
const direct = localClient(testEnvironment().dynamodbEndpoint);
let proxy: FaultProxy;
let viaProxy: ReturnType<typeof localClient>;
let store: EventsStore;
let reader: EventsReader;

const event = (name: string, dates: string[]): NewSpecialEvent => ({
  name,
  location: 'Hall',
  eventDescription: 'Lagging',
  dates,
  price: 1,
});
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const list = async (month: string, page = 1, limit = 10) =>
  (await reader.listEvents({ startDate: `${month}-01`, endDate: `${month}-28`, page, limit })).events;

beforeAll(async () => {
  await ensureTable(direct, tableName, eventsTable);
  await ensureTable(direct, idempotencyTableName, idempotencyTable);
  proxy = await startFaultProxy(testEnvironment().dynamodbEndpoint);
  viaProxy = localClient(proxy.endpoint);
  const client = createDocumentClient(viaProxy);
  store = new EventsStore(client, tableName, idempotencyTableName);
  reader = new EventsReader(client, tableName);
});

/** The indexes lag behind every write from now on... */
const lagBehind = () => proxy.behave({ indexLagMs: HELD_LAG_MS });
/** ...until they catch up: queries see the table as it is. */
const catchUp = () => proxy.behave({});

afterEach(catchUp);

afterAll(async () => {
  viaProxy.destroy();
  direct.destroy();
  await proxy.close();
});

describe('with the indexes behind the table until they catch up', () => {
  test('the index really lags: a Query after a put does not see it, one after the index caught up does', async () => {
    lagBehind();
    const { event: created } = await store.createEvent(event('Probe', ['2045-01-10']));
    const query = () =>
      createDocumentClient(viaProxy).send(
        new QueryCommand({
          TableName: tableName,
          IndexName: MONTH_INDEX,
          KeyConditionExpression: 'gsi1pk = :m',
          ExpressionAttributeValues: { ':m': keys.monthIndexPartition('2045-01') },
        }),
      );
    expect((await query()).Items?.map((item) => String(item.pk))).not.toContain(keys.event(created.eventId).pk);
    catchUp();
    expect((await query()).Items?.map((item) => String(item.pk))).toContain(keys.event(created.eventId).pk);
  });

  test('a created event is not listed twice while the index lags, and is listed once the lag has passed', async () => {
    lagBehind();
    const { event: created } = await store.createEvent(event('New', ['2045-02-10', '2045-02-12']));
    expect((await list('2045-02')).filter((e) => e.eventId === created.eventId).length).toBeLessThanOrEqual(1);
    catchUp();
    expect((await list('2045-02')).filter((e) => e.eventId === created.eventId)).toEqual([created]);
  });

  test('a moved and renamed event is never listed as it was, nor at its old place; once the lag has passed, at its new place only', async () => {
    const { event: created } = await store.createEvent(event('Before', ['2045-03-10']));
    lagBehind();
    const before = proxy.stats().lagged;
    const moved = await store.updateEvent(created.eventId, { name: 'After', dates: ['2045-04-10'] });
    // The old entry is still in the index (shown lagging), but the base item no longer matches it.
    expect(await list('2045-03')).toEqual([]);
    expect(proxy.stats().lagged).toBeGreaterThan(before);
    expect((await list('2045-04')).filter((e) => e.eventId === created.eventId).length).toBeLessThanOrEqual(1);
    catchUp();
    expect(await list('2045-03')).toEqual([]);
    expect(await list('2045-04')).toEqual([moved.event]);
  });

  test('a deleted event is never listed (no ghost), though its entry lingers in the lagging index', async () => {
    const { event: created } = await store.createEvent(event('Ghost', ['2045-05-10']));
    await pause(50);
    expect(await list('2045-05')).toEqual([created]);
    lagBehind();
    await store.deleteEvent(created.eventId);
    const before = proxy.stats().lagged;
    expect(await list('2045-05')).toEqual([]);
    expect(proxy.stats().lagged).toBeGreaterThan(before);
  });

  test('pages read while the index lags never repeat an event; once the lag has passed they hold every event once, in order', async () => {
    const created: StoredEvent[] = [];
    for (let i = 0; i < 5; i++) created.push(await store.createEvent(event(`Paged ${i}`, [`2045-06-${String(10 + i)}`])));
    lagBehind();
    // Rename in reverse: the list order changes while the index still has the old order.
    for (const [i, { event: e }] of created.entries())
      await store.updateEvent(e.eventId, { name: `Paged ${9 - i}`, dates: [`2045-06-${String(20 - i)}`] });
    const seen = [...(await list('2045-06', 1, 2)), ...(await list('2045-06', 2, 2)), ...(await list('2045-06', 3, 2))].map(
      (e) => e.eventId,
    );
    expect(new Set(seen).size).toBe(seen.length);
    catchUp();
    const settled = [...(await list('2045-06', 1, 2)), ...(await list('2045-06', 2, 2)), ...(await list('2045-06', 3, 2))];
    expect(settled.map((e) => e.eventId)).toEqual(created.map(({ event: e }) => e.eventId).reverse());
  });
});

describe('with 30 % of writes cancelled (transaction conflicts and throttling)', () => {
  /** A client that retries what the API answers 409 or 503 (with Retry-After), as told. */
  async function retried<T>(write: () => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await write();
      } catch (error) {
        const status = toProblem(error).problem.status;
        if (![409, 503].includes(status) || attempt >= 30) throw error;
        await pause(Math.random() * 50);
      }
    }
  }

  test('concurrent updates retried as told converge: each applies exactly once, versions consecutive, the index whole', async () => {
    const { event: created } = await store.createEvent(event('Contended', ['2045-07-01']));
    proxy.behave({ cancelShare: 0.3 });
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        retried(() => store.updateEvent(created.eventId, { price: i, dates: [`2045-07-${String(10 + i)}`] })),
      ),
    );
    expect(results.map((r) => r.version).sort((a, b) => a - b)).toEqual(Array.from({ length: 10 }, (_, i) => i + 2));
    expect(proxy.stats().cancelled).toBeGreaterThan(0);
    proxy.behave({});
    const final = await store.getEvent(created.eventId);
    expect(final).toEqual(results.find((r) => r.version === 11));
    const { Items = [] } = await createDocumentClient(direct).send(
      new QueryCommand({
        TableName: tableName,
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: { ':pk': keys.event(created.eventId).pk },
        ConsistentRead: true,
      }),
    );
    expect(Items.map((item) => String(item.sk)).sort()).toEqual(['EVENT', 'MONTH#2045-07']);
  });

  test('creates retried with their Idempotency-Key create exactly one event each', async () => {
    proxy.behave({ cancelShare: 0.3 });
    const keysUsed = Array.from({ length: 8 }, () => randomUUID());
    const created = await Promise.all(
      keysUsed.map((key, i) => retried(() => store.createEvent(event(`Keyed ${i}`, ['2045-08-01']), { principal: 'p', key }))),
    );
    const again = await Promise.all(
      keysUsed.map((key, i) => retried(() => store.createEvent(event(`Keyed ${i}`, ['2045-08-01']), { principal: 'p', key }))),
    );
    expect(again).toEqual(created);
    proxy.behave({});
    await pause(50);
    expect((await list('2045-08')).map((e) => e.name).sort()).toEqual(keysUsed.map((_, i) => `Keyed ${i}`).sort());
  });
});

describe("the operators' import resends a write that did not commit or whose outcome is unknown", () => {
  afterEach(() => proxy.clear());

  const exported = (name: string): StoredEvent => ({
    event: { eventId: randomUUID(), ...event(name, ['2045-09-01', '2045-10-02']) },
    version: 7,
  });
  const baseAndMonths = async (eventId: string) =>
    (
      await createDocumentClient(direct).send(
        new QueryCommand({
          TableName: tableName,
          KeyConditionExpression: 'pk = :pk',
          ExpressionAttributeValues: { ':pk': keys.event(eventId).pk },
          ConsistentRead: true,
        }),
      )
    ).Items ?? [];

  test('a commit that applied but lost every answer, and a fence that never answered: counted as created, written once', async () => {
    const stored = exported('Lost answer');
    const hungBefore = proxy.stats().injected.hang ?? 0;
    proxy.inject({ fault: 'lost-response', operation: 'TransactWriteItems', table: tableName });
    proxy.inject({ fault: 'hang', operation: 'UpdateItem', table: tableName, times: 1 });
    expect(await store.importEvent(stored)).toBe('created');
    expect(await store.getEvent(stored.event.eventId)).toEqual(stored);
    expect((await baseAndMonths(stored.event.eventId)).map((item) => String(item.sk)).sort()).toEqual([
      'EVENT',
      'MONTH#2045-09',
      'MONTH#2045-10',
    ]);
    // The fence ran and never answered: the outcome was unknown until the resend read the event.
    expect((proxy.stats().injected.hang ?? 0) - hungBefore).toBe(1);
  });

  test('a commit that never arrived and a fence that never answered (both timed out): sent again, created at its version', async () => {
    const stored = exported('Timed out');
    const hungBefore = proxy.stats().injected.hang ?? 0;
    proxy.inject({ fault: 'hang', operation: 'TransactWriteItems', table: tableName, times: 1 });
    proxy.inject({ fault: 'hang', operation: 'UpdateItem', table: tableName, times: 1 });
    expect(await store.importEvent(stored)).toBe('created');
    expect(await store.getEvent(stored.event.eventId)).toEqual(stored);
    expect((proxy.stats().injected.hang ?? 0) - hungBefore).toBe(2);
  });

  test('a replacement whose outcome was unknown is counted as replaced, its version grown once', async () => {
    const stored = exported('Before');
    expect(await store.importEvent(stored)).toBe('created');
    const changed: StoredEvent = { ...stored, event: { ...stored.event, name: 'After' } };
    proxy.inject({ fault: 'lost-response', operation: 'TransactWriteItems', table: tableName });
    proxy.inject({ fault: 'hang', operation: 'UpdateItem', table: tableName, times: 1 });
    expect(await store.importEvent(changed)).toBe('replaced');
    expect(await store.getEvent(stored.event.eventId)).toEqual({ ...changed, version: 8 });
  });
});
