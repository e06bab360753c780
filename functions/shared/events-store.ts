// The special-events store: the only module that knows the DynamoDB key design.
//
// An event is one base item (EVENT#<id> / EVENT) plus one index item per date
// (EVENT#<id> / DATE#<date>) whose GSI keys (MONTH#<yyyy-mm> / <date> NUL <name> NUL <id>) put it
// in the `byDate` index. Every write of an event and its date items is one TransactWriteItems
// call, conditioned on the base item's version, so no reader of the base table ever sees a half
// write and concurrent writers never leave orphan date items.
import { createHash, randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  BatchGetCommand,
  GetCommand,
  QueryCommand,
  TransactWriteCommand,
  UpdateCommand,
  type BatchGetCommandOutput,
  type DynamoDBDocumentClient,
} from '@aws-sdk/lib-dynamodb';
import type { TransactWriteCommandInput } from '@aws-sdk/lib-dynamodb';
import { unmarshall, type NativeAttributeValue } from '@aws-sdk/util-dynamodb';
import { monthsBetween } from './calendar-dates.ts';
import type { NewSpecialEvent, SpecialEvent, SpecialEventChanges } from './event-schema.ts';
import { LIMITS } from './limits.ts';
import { DATE_INDEX, idempotencyTable, keys } from './table-definition.ts';

export interface StoredEvent {
  event: SpecialEvent;
  /** Incremented by every write; the HTTP layer exposes it as the ETag. */
  version: number;
}

export interface ListEventsQuery {
  startDate: string;
  endDate: string;
  page: number;
  limit: number;
}

export interface ListEventsResult {
  events: SpecialEvent[];
  /** Read capacity units consumed by the index queries and item reads of this page. */
  consumedReadCapacity: number;
}

export class EventNotFoundError extends Error {
  override name = 'EventNotFoundError';
  readonly eventId: string;
  constructor(eventId: string) {
    super(`No special event has the id ${eventId}`);
    this.eventId = eventId;
  }
}

export class EventVersionMismatchError extends Error {
  override name = 'EventVersionMismatchError';
  readonly eventId: string;
  readonly currentVersion: number;
  constructor(eventId: string, currentVersion: number) {
    super(`The special event ${eventId} has changed: its current version is ${currentVersion}`);
    this.eventId = eventId;
    this.currentVersion = currentVersion;
  }
}

/** Other writers kept winning the race for the same event; the client may retry. */
export class ConcurrentModificationError extends Error {
  override name = 'ConcurrentModificationError';
  readonly eventId: string;
  constructor(eventId: string) {
    super(`The special event ${eventId} is being changed by other requests`);
    this.eventId = eventId;
  }
}

/** The Idempotency-Key of a creation: the caller's key, scoped to the authenticated principal. */
export interface IdempotencyScope {
  principal: string;
  key: string;
}

/** The Idempotency-Key was already used, within its lifetime, with a different event. */
export class IdempotencyKeyReusedError extends Error {
  override name = 'IdempotencyKeyReusedError';
  constructor() {
    super('This Idempotency-Key was already used with a different request body');
  }
}

/** DynamoDB kept some keys of a batch read unprocessed (throttling); the client may retry. */
export class StoreBusyError extends Error {
  override name = 'StoreBusyError';
}

type Item = Record<string, unknown>;

const EVENT_ATTRIBUTES = ['eventId', 'name', 'location', 'eventDescription', 'dates', 'price', 'version'];
const MAX_WRITE_ATTEMPTS = 10;

export class EventsStore {
  private readonly client: DynamoDBDocumentClient;
  private readonly tableName: string;

  private readonly idempotencyTableName: string | undefined;
  private readonly signal: AbortSignal | undefined;

  /** `signal` aborts every DynamoDB call and retry wait of this store (the invocation's deadline). */
  constructor(client: DynamoDBDocumentClient, tableName: string, idempotencyTableName?: string, signal?: AbortSignal) {
    this.client = client;
    this.tableName = tableName;
    this.idempotencyTableName = idempotencyTableName;
    this.signal = signal;
  }

  /**
   * Stores a new event. With an idempotency scope, the event and its idempotency record are
   * written in the same transaction, so a key creates at most one event however the requests
   * race, time out or lose their responses; a later request with the key gets the event it
   * created (or IdempotencyKeyReusedError if its event differs) for LIMITS.idempotencyWindowHours.
   *
   * Written here rather than with Powertools idempotency: its record is saved in calls of its
   * own before and after the handler, so a crash between the event write and the record's
   * completion lets the retry create a second event; and its JMESPath engine added 42 KB to
   * this function's bundle (287 KB, over the 250 KB target; docs/PERFORMANCE.md).
   */
  async createEvent(input: NewSpecialEvent, idempotency?: IdempotencyScope): Promise<StoredEvent> {
    const request = idempotency && this.idempotencyRequest(idempotency, input);
    for (let attempt = 1; attempt <= MAX_WRITE_ATTEMPTS; attempt++) {
      const event: SpecialEvent = { eventId: randomUUID(), ...input };
      const now = new Date();
      const nowSeconds = Math.floor(now.getTime() / 1000);
      const eventItems = [
        {
          Put: {
            TableName: this.tableName,
            Item: { ...keys.event(event.eventId), ...event, version: 1, createdAt: now.toISOString(), updatedAt: now.toISOString() },
            ConditionExpression: 'attribute_not_exists(pk)',
          },
        },
        ...event.dates.map((date) => this.putDateItem(event, date)),
      ];
      if (!request) {
        await this.transact(eventItems);
        return { event, version: 1 };
      }
      try {
        await this.transact([
          ...eventItems,
          {
            Put: {
              TableName: request.tableName,
              Item: {
                [idempotencyTable.partitionKey.name]: request.id,
                [idempotencyTable.timeToLiveAttribute]: nowSeconds + LIMITS.idempotencyWindowHours * 3600,
                requestHash: request.requestHash,
                event,
                createdAt: now.toISOString(),
              },
              // TTL deletes expired records only eventually: an expired record counts as absent.
              ConditionExpression: `attribute_not_exists(#id) OR #expiration <= :now`,
              ExpressionAttributeNames: { '#id': idempotencyTable.partitionKey.name, '#expiration': idempotencyTable.timeToLiveAttribute },
              ExpressionAttributeValues: { ':now': nowSeconds },
            },
          },
        ]);
        return { event, version: 1 };
      } catch (error) {
        if (!isLostRace(error)) throw error;
      }
      // The key is taken (or a request with it is committing right now): answer as the first did.
      const { Item } = await this.client.send(
        new GetCommand({ TableName: request.tableName, Key: { [idempotencyTable.partitionKey.name]: request.id }, ConsistentRead: true }),
        { abortSignal: this.signal },
      );
      if (Item && Number(Item[idempotencyTable.timeToLiveAttribute]) > nowSeconds) {
        if (Item.requestHash !== request.requestHash) throw new IdempotencyKeyReusedError();
        return toStoredEvent({ ...(Item.event as Item), version: 1 });
      }
      await sleep(Math.random() * 10 * attempt, undefined, { signal: this.signal });
    }
    throw new StoreBusyError('Requests with this Idempotency-Key kept colliding');
  }

  private idempotencyRequest(scope: IdempotencyScope, input: NewSpecialEvent) {
    if (!this.idempotencyTableName) throw new Error('The events store has no idempotency table');
    const sha256 = (text: string) => createHash('sha256').update(text).digest('base64url');
    return {
      tableName: this.idempotencyTableName,
      // Hashed: keys are up to 255 characters of anything; the id stays short and reveals nothing.
      id: `create#${sha256(`${scope.principal}\u0000${scope.key}`)}`,
      // The validated input (fixed key order, dates normalised): the same event sent with other
      // whitespace or date order is the same request.
      requestHash: sha256(JSON.stringify(input)),
    };
  }

  async getEvent(eventId: string): Promise<StoredEvent | undefined> {
    const { Item } = await this.client.send(
      new GetCommand({ TableName: this.tableName, Key: keys.event(eventId), ConsistentRead: true }),
      { abortSignal: this.signal },
    );
    return Item ? toStoredEvent(Item) : undefined;
  }

  /**
   * Applies `changes` to the current event. Without `expectedVersion` a lost race is retried
   * against the new current state (last writer wins); with it, a changed event fails with
   * EventVersionMismatchError (If-Match).
   */
  async updateEvent(eventId: string, changes: SpecialEventChanges, expectedVersion?: number): Promise<StoredEvent> {
    const { name, dates, ...details } = changes;
    // The index items carry the name and the dates; the other fields live in the base item only.
    if (name === undefined && dates === undefined) return this.updateDetails(eventId, details, expectedVersion);
    return this.writeWithRetry(eventId, expectedVersion, async (current) => {
      const next: SpecialEvent = { ...current.event, ...changes };
      const version = current.version + 1;
      const renamed = next.name !== current.event.name;
      const removedDates = current.event.dates.filter((date) => !next.dates.includes(date));
      // A rename moves every date item in the index (the name is part of its sort key).
      const writtenDates = renamed ? next.dates : next.dates.filter((date) => !current.event.dates.includes(date));
      await this.transact([
        {
          Update: {
            TableName: this.tableName,
            Key: keys.event(eventId),
            UpdateExpression:
              'SET #name = :name, #location = :location, eventDescription = :description, dates = :dates, ' +
              'price = :price, version = :version, updatedAt = :now',
            ConditionExpression: 'version = :currentVersion',
            ExpressionAttributeNames: { '#name': 'name', '#location': 'location' },
            ExpressionAttributeValues: {
              ':name': next.name,
              ':location': next.location,
              ':description': next.eventDescription,
              ':dates': next.dates,
              ':price': next.price,
              ':version': version,
              ':currentVersion': current.version,
              ':now': new Date().toISOString(),
            },
          },
        },
        ...removedDates.map((date) => ({ Delete: { TableName: this.tableName, Key: keys.eventDate(eventId, date) } })),
        ...writtenDates.map((date) => this.putDateItem(next, date)),
      ]);
      return { event: next, version };
    });
  }

  /**
   * A change of location, description or price alone: one conditional UpdateItem that returns
   * the new event, with no read before it and no transaction. Its token makes a retry of the
   * same call idempotent, as ClientRequestToken does for transactions: when the SDK resends it
   * after a lost response, the condition fails on our own token and the stored event is the answer
   * (not a second version, nor a 412 for an If-Match the first attempt satisfied).
   */
  private async updateDetails(
    eventId: string,
    details: Omit<SpecialEventChanges, 'name' | 'dates'>,
    expectedVersion: number | undefined,
  ): Promise<StoredEvent> {
    const fields = Object.entries(details).filter(([, value]) => value !== undefined);
    // Lost races here are other writers' transactions holding the item (TransactionConflict).
    return this.retryLostRaces(eventId, async () => {
      const token = randomUUID();
      try {
        const { Attributes } = await this.client.send(
          new UpdateCommand({
            TableName: this.tableName,
            Key: keys.event(eventId),
            UpdateExpression: `SET ${fields.map((_, i) => `#f${i} = :f${i}, `).join('')}version = version + :one, updatedAt = :now, writeToken = :token`,
            ConditionExpression: `${expectedVersion === undefined ? 'attribute_exists(pk)' : 'version = :expectedVersion'} AND (attribute_not_exists(writeToken) OR writeToken <> :token)`,
            ExpressionAttributeNames: Object.fromEntries(fields.map(([field], i) => [`#f${i}`, field])),
            ExpressionAttributeValues: {
              ...Object.fromEntries(fields.map(([, value], i) => [`:f${i}`, value])),
              ':one': 1,
              ':now': new Date().toISOString(),
              ':token': token,
              ...(expectedVersion === undefined ? {} : { ':expectedVersion': expectedVersion }),
            },
            ReturnValues: 'ALL_NEW',
            ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
          }),
          { abortSignal: this.signal },
        );
        return toStoredEvent(Attributes as Item);
      } catch (error) {
        if (!isConditionalCheckFailed(error)) throw error;
        // The item as it is now, in DynamoDB's own format (the Document client leaves errors alone).
        const current = error.Item && unmarshall(error.Item as Record<string, NativeAttributeValue>);
        if (!current) throw new EventNotFoundError(eventId);
        if (current.writeToken === token) return toStoredEvent(current);
        throw new EventVersionMismatchError(eventId, Number(current.version));
      }
    });
  }

  async deleteEvent(eventId: string, expectedVersion?: number): Promise<void> {
    await this.writeWithRetry(eventId, expectedVersion, async (current) => {
      await this.transact([
        {
          Delete: {
            TableName: this.tableName,
            Key: keys.event(eventId),
            ConditionExpression: 'version = :currentVersion',
            ExpressionAttributeValues: { ':currentVersion': current.version },
          },
        },
        ...current.event.dates.map((date) => ({
          Delete: { TableName: this.tableName, Key: keys.eventDate(eventId, date) },
        })),
      ]);
      return current;
    });
  }

  /**
   * One page of the events with at least one date in [startDate, endDate], ordered by their first
   * date in the range, then name, then id. Reads only index entries inside the range (never the
   * rest of the table), then the page's base items with strongly consistent reads: the index is
   * eventually consistent, so an entry whose event is gone or no longer has a date in the range
   * is dropped and the next candidate takes its place.
   */
  async listEvents(query: ListEventsQuery): Promise<ListEventsResult> {
    const candidates = new DateIndexReader(this.client, this.tableName, query.startDate, query.endDate, this.signal);
    await candidates.take((query.page - 1) * query.limit);
    const events: SpecialEvent[] = [];
    let itemReadCapacity = 0;
    while (events.length < query.limit) {
      const eventIds = await candidates.take(query.limit - events.length);
      if (eventIds.length === 0) break;
      const { items, consumedReadCapacity } = await this.batchGetEvents(eventIds);
      itemReadCapacity += consumedReadCapacity;
      for (const eventId of eventIds) {
        const item = items.get(eventId);
        if (item && toStoredEvent(item).event.dates.some((d) => d >= query.startDate && d <= query.endDate)) {
          events.push(toStoredEvent(item).event);
        }
      }
    }
    return { events, consumedReadCapacity: candidates.consumedReadCapacity + itemReadCapacity };
  }

  private putDateItem(event: SpecialEvent, date: string) {
    return {
      Put: {
        TableName: this.tableName,
        Item: { ...keys.eventDate(event.eventId, date), ...keys.dateIndex(date, event.name, event.eventId) },
      },
    };
  }

  /** Read-check-write loop shared by update and delete: the transaction's version condition makes it safe. */
  private async writeWithRetry<T>(
    eventId: string,
    expectedVersion: number | undefined,
    write: (current: StoredEvent) => Promise<T>,
  ): Promise<T> {
    return this.retryLostRaces(eventId, async () => {
      const current = await this.getEvent(eventId);
      if (!current) throw new EventNotFoundError(eventId);
      if (expectedVersion !== undefined && current.version !== expectedVersion) {
        throw new EventVersionMismatchError(eventId, current.version);
      }
      return write(current);
    });
  }

  /** Runs `attempt` again, after a jittered back-off, while another writer wins the race for the event. */
  private async retryLostRaces<T>(eventId: string, attempt: () => Promise<T>): Promise<T> {
    for (let round = 1; round <= MAX_WRITE_ATTEMPTS; round++) {
      try {
        return await attempt();
      } catch (error) {
        if (!isLostRace(error)) throw error;
        await sleep(Math.random() * 10 * round, undefined, { signal: this.signal });
      }
    }
    throw new ConcurrentModificationError(eventId);
  }

  private async transact(items: NonNullable<TransactWriteCommandInput['TransactItems']>): Promise<void> {
    // The token makes the SDK's own retries of this call idempotent (DynamoDB remembers it 10 minutes).
    await this.client.send(new TransactWriteCommand({ TransactItems: items, ClientRequestToken: randomUUID() }), {
      abortSignal: this.signal,
    });
  }

  private async batchGetEvents(eventIds: string[]): Promise<{ items: Map<string, Item>; consumedReadCapacity: number }> {
    const items = new Map<string, Item>();
    let consumedReadCapacity = 0;
    let keysToRead: Record<string, unknown>[] | undefined = eventIds.map((eventId) => keys.event(eventId));
    for (let attempt = 1; keysToRead && keysToRead.length > 0; attempt++) {
      if (attempt > 5) throw new StoreBusyError('DynamoDB left part of a batch read unprocessed');
      if (attempt > 1) await sleep(2 ** attempt * 10 * Math.random(), undefined, { signal: this.signal });
      const response: BatchGetCommandOutput = await this.client.send(
        new BatchGetCommand({
          RequestItems: {
            [this.tableName]: {
              Keys: keysToRead,
              ConsistentRead: true,
              ProjectionExpression: EVENT_ATTRIBUTES.map((_, i) => `#a${i}`).join(', '),
              ExpressionAttributeNames: Object.fromEntries(EVENT_ATTRIBUTES.map((name, i) => [`#a${i}`, name])),
            },
          },
          ReturnConsumedCapacity: 'TOTAL',
        }),
        { abortSignal: this.signal },
      );
      for (const item of response.Responses?.[this.tableName] ?? []) items.set(String(item.eventId), item);
      consumedReadCapacity += sumCapacity(response.ConsumedCapacity);
      keysToRead = response.UnprocessedKeys?.[this.tableName]?.Keys;
    }
    return { items, consumedReadCapacity };
  }
}

/**
 * Walks the `byDate` index month by month over a date range and hands out distinct event ids in
 * index order, i.e. by first date in the range, then name, then id.
 */
class DateIndexReader {
  consumedReadCapacity = 0;
  private readonly months: string[];
  private monthIndex = 0;
  private exclusiveStartKey: Record<string, unknown> | undefined;
  private readonly seen = new Set<string>();
  private readonly buffered: string[] = [];

  private readonly client: DynamoDBDocumentClient;
  private readonly tableName: string;
  private readonly startDate: string;
  private readonly endDate: string;

  private readonly signal: AbortSignal | undefined;

  constructor(client: DynamoDBDocumentClient, tableName: string, startDate: string, endDate: string, signal?: AbortSignal) {
    this.client = client;
    this.signal = signal;
    this.tableName = tableName;
    this.startDate = startDate;
    this.endDate = endDate;
    this.months = monthsBetween(startDate, endDate);
  }

  async take(count: number): Promise<string[]> {
    while (this.buffered.length < count && this.monthIndex < this.months.length) {
      await this.readMore(count - this.buffered.length);
    }
    return this.buffered.splice(0, count);
  }

  private async readMore(wanted: number): Promise<void> {
    const month = this.months[this.monthIndex] as string;
    const range = keys.dateIndexRange(this.startDate, this.endDate);
    const response = await this.client.send(
      new QueryCommand({
        TableName: this.tableName,
        IndexName: DATE_INDEX,
        KeyConditionExpression: 'gsi1pk = :month AND gsi1sk BETWEEN :from AND :to',
        ExpressionAttributeValues: { ':month': keys.dateIndexPartition(month), ':from': range.from, ':to': range.to },
        // The event id is all this needs: a quarter of the attributes to send and decode (capacity is the same).
        ProjectionExpression: 'pk',
        // Index items are ~100 bytes: reading a few more than needed costs nothing extra (4 KB units).
        Limit: Math.min(1000, Math.max(32, 2 * wanted)),
        ExclusiveStartKey: this.exclusiveStartKey,
        ReturnConsumedCapacity: 'TOTAL',
      }),
      { abortSignal: this.signal },
    );
    this.consumedReadCapacity += sumCapacity(response.ConsumedCapacity);
    for (const item of response.Items ?? []) {
      const eventId = keys.eventIdFromPk(String(item.pk));
      if (!this.seen.has(eventId)) {
        this.seen.add(eventId);
        this.buffered.push(eventId);
      }
    }
    // Only a missing LastEvaluatedKey means the month is exhausted (pages also stop at 1 MB).
    this.exclusiveStartKey = response.LastEvaluatedKey;
    if (!this.exclusiveStartKey) this.monthIndex += 1;
  }
}

function toStoredEvent(item: Item): StoredEvent {
  return {
    event: {
      eventId: String(item.eventId),
      name: String(item.name),
      location: String(item.location),
      eventDescription: String(item.eventDescription),
      dates: [...(item.dates as string[])],
      price: Number(item.price),
    },
    version: Number(item.version),
  };
}

function sumCapacity(consumed: { CapacityUnits?: number }[] | { CapacityUnits?: number } | undefined): number {
  const list = Array.isArray(consumed) ? consumed : consumed ? [consumed] : [];
  return list.reduce((sum, entry) => sum + (entry.CapacityUnits ?? 0), 0);
}

function isConditionalCheckFailed(error: unknown): error is Error & { Item?: Record<string, unknown> } {
  return error instanceof Error && error.name === 'ConditionalCheckFailedException';
}

/** A transaction cancelled only because another writer changed or locked the same items. */
function isLostRace(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  if (error.name === 'TransactionConflictException') return true;
  if (error.name !== 'TransactionCanceledException') return false;
  const reasons = (error as { CancellationReasons?: { Code?: string }[] }).CancellationReasons ?? [];
  return reasons.every((reason) => ['None', 'ConditionalCheckFailed', 'TransactionConflict'].includes(reason.Code ?? 'None'));
}
