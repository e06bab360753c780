// The special-events store: the only module that knows the DynamoDB key design.
//
// An event is one base item (EVENT#<id> / EVENT), the only record of what is committed, plus one
// index item per date (EVENT#<id> / DATE#<date>#<name>) whose GSI keys (MONTH#<yyyy-mm> /
// <date> NUL <name> NUL <id> NUL <stamp>) put it in the `byDate` index. The index may hold more
// entries than the committed dates (written before a commit, or not yet removed after one): a
// reader counts an entry only when the base item, read strongly consistently, has its date and
// name. Protocol, failure cases and who cleans what: README "Data model".
import { createHash, randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import {
  BatchGetCommand,
  DeleteCommand,
  GetCommand,
  QueryCommand,
  ScanCommand,
  TransactWriteCommand,
  UpdateCommand,
  type BatchGetCommandOutput,
  type DynamoDBDocumentClient,
  type QueryCommandOutput,
  type TransactWriteCommandInput,
} from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { monthsBetween } from './calendar-dates.ts';
import type { NewSpecialEvent, SpecialEvent, SpecialEventChanges } from './event-schema.ts';
import { LIMITS } from './limits.ts';
import { DATE_INDEX, idempotencyTable, keys, type DateIndexEntry, type IndexStamp } from './table-definition.ts';

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
/** TransactWriteItems' cap: a write whose base item and index changes fit is one transaction. */
const MAX_TRANSACTION_ACTIONS = 100;
/** Index items written or deleted at once by a large write (the SDK's HTTP agent keeps 50 sockets). */
const PARALLEL_ITEM_WRITES = 25;
/**
 * A write commits only this soon after it began writing index items, so an index item older than
 * LEFTOVER_GRACE_MS that no commit made valid can no longer become valid: readers may delete it.
 */
const COMMIT_WINDOW_MS = 60_000;
const LEFTOVER_GRACE_MS = 5 * 60_000;
/**
 * Leftovers one list deletes at most: what one failed write of a whole year can leave in a window
 * (16 rounds of PARALLEL_ITEM_WRITES deletes), so a list is never delayed by more; the rest is
 * left to the next lists. Uncounted leftovers cost reads, not correctness.
 */
const MAX_LEFTOVER_DELETES_PER_LIST = 400;

/** One index item: an event date under the name the event has (or is about to have). */
interface IndexKey {
  date: string;
  name: string;
}

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
      const basePut = {
        Put: {
          TableName: this.tableName,
          Item: { ...keys.event(event.eventId), ...event, version: 1, createdAt: now.toISOString(), updatedAt: now.toISOString() },
          ConditionExpression: 'attribute_not_exists(pk)',
        },
      };
      const recordPut = request && {
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
      };
      const commit = recordPut ? [basePut, recordPut] : [basePut];
      const added = indexKeysOf(event);
      if (request && commit.length + added.length > MAX_TRANSACTION_ACTIONS) {
        // A large create writes index items before its commit: a retried request would leave a
        // second set behind, so look for the first request's event before writing any.
        const replay = await this.replayOf(request, nowSeconds);
        if (replay) return replay;
      }
      try {
        await this.commitWithIndex(event.eventId, newStamp(1), commit, added, []);
        return { event, version: 1 };
      } catch (error) {
        if (!request || !isLostRace(error)) throw error;
      }
      // The key is taken (or a request with it is committing right now): answer as the first did.
      const replay = await this.replayOf(request, nowSeconds);
      if (replay) return replay;
      await sleep(Math.random() * 10 * attempt, undefined, { signal: this.signal });
    }
    throw new StoreBusyError('Idempotency-Key requests kept colliding');
  }

  /** The event an earlier request with the same Idempotency-Key created, if its record is live. */
  private async replayOf(request: { tableName: string; id: string; requestHash: string }, nowSeconds: number): Promise<StoredEvent | undefined> {
    const record = await this.getItem(request.tableName, { [idempotencyTable.partitionKey.name]: request.id });
    if (!record || Number(record[idempotencyTable.timeToLiveAttribute]) <= nowSeconds) return undefined;
    if (record.requestHash !== request.requestHash) throw new IdempotencyKeyReusedError();
    return toStoredEvent({ ...(record.event as Item), version: 1 });
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
    const item = await this.getItem(this.tableName, keys.event(eventId));
    return item && toStoredEvent(item);
  }

  /** A strongly consistent GetItem. */
  private async getItem(tableName: string, key: Item): Promise<Item | undefined> {
    const { Item } = await this.client.send(new GetCommand({ TableName: tableName, Key: key, ConsistentRead: true }), { abortSignal: this.signal });
    return Item;
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
    // Index items an earlier attempt of this request wrote for a commit that lost the race.
    let writtenByLostAttempts: IndexKey[] = [];
    return this.writeWithRetry(eventId, expectedVersion, async (current) => {
      const next: SpecialEvent = { ...current.event, ...changes };
      const version = current.version + 1;
      const before = indexKeysOf(current.event);
      const after = indexKeysOf(next);
      const added = without(after, before);
      const stale = without([...before, ...writtenByLostAttempts], after);
      writtenByLostAttempts = [...writtenByLostAttempts, ...added];
      const commit = {
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
      };
      await this.commitWithIndex(eventId, newStamp(version), [commit], added, stale);
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
        const current = error.Item && unmarshall(error.Item as Record<string, AttributeValue>);
        if (!current) throw new EventNotFoundError(eventId);
        if (current.writeToken === token) return toStoredEvent(current);
        throw new EventVersionMismatchError(eventId, Number(current.version));
      }
    });
  }

  async deleteEvent(eventId: string, expectedVersion?: number): Promise<void> {
    await this.writeWithRetry(eventId, expectedVersion, async (current) => {
      const commit = {
        Delete: {
          TableName: this.tableName,
          Key: keys.event(eventId),
          ConditionExpression: 'version = :currentVersion',
          ExpressionAttributeValues: { ':currentVersion': current.version },
        },
      };
      await this.commitWithIndex(eventId, newStamp(current.version + 1), [commit], [], indexKeysOf(current.event));
      return current;
    });
  }

  /**
   * Commits `commit` (the base item's version-conditioned write, with the idempotency record of a
   * create) together with the index changes: `added` index items must exist before the commit is
   * visible, `stale` ones are removed once it is.
   *
   * When everything fits in one transaction it is one TransactWriteItems, as atomic as can be.
   * Otherwise (a large event): the added items are put first, stamped with the committing
   * version, each only over an item of the same or an older version; then the commit, the one
   * point where readers switch to the new state; then the stale items are deleted, each only if no
   * later write has put it again. A write that stops before its commit leaves index items no
   * reader counts; one that stops after leaves stale items no reader counts: the next list that
   * meets them deletes them (listEvents).
   */
  private async commitWithIndex(
    eventId: string,
    stamp: IndexStamp,
    commit: NonNullable<TransactWriteCommandInput['TransactItems']>,
    added: IndexKey[],
    stale: IndexKey[],
  ): Promise<void> {
    // Stamps only ever grow, so a reader that saw an old stamp can delete exactly what it saw; an
    // item stamped newer belongs to a newer write, and this one has lost the race (isLostRace).
    const puts = added.map((key) => ({
      Put: {
        TableName: this.tableName,
        Item: { ...keys.eventDate(eventId, key.date, key.name), ...keys.dateIndex(key.date, key.name, eventId, stamp), writeVersion: stamp.version },
        ConditionExpression: 'attribute_not_exists(writeVersion) OR writeVersion <= :v',
        ExpressionAttributeValues: { ':v': stamp.version },
      },
    }));
    if (commit.length + added.length + stale.length <= MAX_TRANSACTION_ACTIONS) {
      await this.transact([
        ...commit,
        ...puts,
        ...stale.map((key) => ({ Delete: { TableName: this.tableName, Key: keys.eventDate(eventId, key.date, key.name) } })),
      ]);
      return;
    }
    // Transactions of up to 100 puts, all at once: PutItem is all a create may call, and a
    // transaction's ClientRequestToken makes the SDK's retries idempotent.
    const batches = Array.from({ length: Math.ceil(puts.length / MAX_TRANSACTION_ACTIONS) }, (_, i) =>
      puts.slice(i * MAX_TRANSACTION_ACTIONS, (i + 1) * MAX_TRANSACTION_ACTIONS),
    );
    await inParallel(batches, (batch) => this.transact(batch));
    // After this, a reader could think these items abandoned (LEFTOVER_GRACE_MS): never commit then.
    if (Date.now() - stamp.writtenAt > COMMIT_WINDOW_MS) throw new StoreBusyError('Index items took too long');
    await this.transact(commit);
    // Not an item a later write has put again (a date removed now and added back since). If this
    // fails (throttling, the deadline), the write is still committed: a stale item left behind is
    // one no reader counts, and the next list that meets it deletes it.
    await inParallel(stale, (key) => this.deleteIndexItem(keys.eventDate(eventId, key.date, key.name), 'NOT writeVersion > :v', stamp.version)).catch(
      () => undefined,
    );
  }

  /** Deletes an index item if `condition` (on `:v`) holds; an item that no longer qualifies is left alone. */
  private async deleteIndexItem(key: { pk: string; sk: string }, condition: string, value: number | string): Promise<void> {
    try {
      await this.client.send(
        new DeleteCommand({
          TableName: this.tableName,
          Key: { pk: key.pk, sk: key.sk },
          ConditionExpression: condition,
          ExpressionAttributeValues: { ':v': value },
        }),
        { abortSignal: this.signal },
      );
    } catch (error) {
      if (!isConditionalCheckFailed(error)) throw error;
    }
  }

  /**
   * One page of the events with at least one date in [startDate, endDate], ordered by their first
   * date in the range, then name, then id. Reads only index entries inside the range (never the
   * rest of the table), then the base items of their events with strongly consistent reads. An
   * entry counts only if its event's committed state has its date and its name, so leftovers of
   * unfinished writes and the index's propagation delay never show: the event takes the place of
   * its first entry that counts. Skipped pages are validated the same way, so pages never
   * overlap or leave an event out. Leftovers it meets that no write can still commit are deleted.
   */
  async listEvents(query: ListEventsQuery): Promise<ListEventsResult> {
    const range = keys.dateIndexRange(query.startDate, query.endDate);
    const queryMonth: IndexQuery = (month, startKey, limit) =>
      this.client.send(
        new QueryCommand({
          TableName: this.tableName,
          IndexName: DATE_INDEX,
          KeyConditionExpression: 'gsi1pk = :month AND gsi1sk BETWEEN :from AND :to',
          ExpressionAttributeValues: { ':month': keys.dateIndexPartition(month), ':from': range.from, ':to': range.to },
          // The keys carry the date, name, id and stamp; the month is known.
          ProjectionExpression: 'pk, sk, gsi1sk',
          Limit: limit,
          ExclusiveStartKey: startKey,
          ReturnConsumedCapacity: 'TOTAL',
        }),
        { abortSignal: this.signal },
      );
    const entries = new DateIndexReader(queryMonth, query.startDate, query.endDate);
    const baseItems = new Map<string, CommittedIndex | undefined>();
    const listed = new Set<string>();
    const leftovers: DateIndexEntry[] = [];
    const events: SpecialEvent[] = [];
    let toSkip = (query.page - 1) * query.limit;
    let itemReadCapacity = 0;
    const now = Date.now();
    while (events.length < query.limit) {
      const entry = await entries.next();
      if (!entry) break;
      // A listed event's base item is known: its other entries are only checked for leftovers.
      if (!baseItems.has(entry.eventId)) {
        // Read this event and the next ones the page may need in one batch.
        const wanted = Math.min(100, toSkip + query.limit - events.length);
        const upcoming = await entries.upcomingEventIds(wanted - 1, (id) => id !== entry.eventId && !baseItems.has(id) && !listed.has(id));
        const { items, consumedReadCapacity } = await this.batchGetEvents([entry.eventId, ...upcoming]);
        itemReadCapacity += consumedReadCapacity;
        for (const eventId of [entry.eventId, ...upcoming]) {
          const item = items.get(eventId);
          baseItems.set(eventId, item && { item, name: String(item.name), dates: new Set(item.dates as string[]), version: Number(item.version) });
        }
      }
      const committed = baseItems.get(entry.eventId);
      if (!committed || committed.name !== entry.name || !committed.dates.has(entry.date)) {
        if (isAbandoned(entry, committed, now)) leftovers.push(entry);
      } else if (!listed.has(entry.eventId)) {
        listed.add(entry.eventId);
        if (toSkip > 0) toSkip -= 1;
        else events.push(toStoredEvent(committed.item).event);
      }
    }
    // Best effort (throttled or out of time: the next list that meets them tries again); each only
    // if it is still exactly the item this list saw (same stamp).
    await inParallel(leftovers.slice(0, MAX_LEFTOVER_DELETES_PER_LIST), (entry) => this.deleteIndexItem(entry, 'gsi1sk = :v', entry.gsi1sk)).catch(
      () => undefined,
    );
    return { events, consumedReadCapacity: entries.consumedReadCapacity + itemReadCapacity };
  }

  /**
   * Every committed event with its version, one Scan page (at most 1 MB) at a time: for the
   * operators' export (bin/events.ts), never for a handler (no function may Scan). Only base
   * items are returned; index items and users are filtered out by DynamoDB.
   */
  async *allEvents(): AsyncGenerator<StoredEvent> {
    let startKey: Record<string, unknown> | undefined;
    do {
      const page = await this.client.send(
        new ScanCommand({
          TableName: this.tableName,
          FilterExpression: 'sk = :sk',
          ExpressionAttributeValues: { ':sk': keys.event('').sk },
          ExclusiveStartKey: startKey,
          ConsistentRead: true,
        }),
        { abortSignal: this.signal },
      );
      for (const item of page.Items ?? []) yield toStoredEvent(item);
      startKey = page.LastEvaluatedKey;
    } while (startKey);
  }

  /**
   * Writes an exported event under its own id and version (bin/events.ts import). Absent: created
   * as it was, index included. Present with the same fields: left alone (a re-import changes
   * nothing). Present with other fields: the file wins, through updateEvent (the version grows).
   */
  async importEvent(stored: StoredEvent): Promise<'created' | 'unchanged' | 'replaced'> {
    const { event, version } = stored;
    return this.retryLostRaces(event.eventId, async () => {
      const current = await this.getEvent(event.eventId);
      const { eventId, ...fields } = event;
      if (current) {
        const { eventId: _, ...currentFields } = current.event;
        if (JSON.stringify(sortedKeys(currentFields)) === JSON.stringify(sortedKeys(fields))) return 'unchanged';
        await this.updateEvent(eventId, fields);
        return 'replaced';
      }
      const now = new Date().toISOString();
      const basePut = {
        Put: {
          TableName: this.tableName,
          Item: { ...keys.event(eventId), ...event, version, createdAt: now, updatedAt: now },
          ConditionExpression: 'attribute_not_exists(pk)',
        },
      };
      await this.commitWithIndex(eventId, newStamp(version), [basePut], indexKeysOf(event), []);
      return 'created';
    });
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
    let keysToRead: Item[] | undefined = eventIds.map((eventId) => keys.event(eventId));
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

/** What a list needs of a base item to decide whether an index entry counts. */
interface CommittedIndex {
  item: Item;
  name: string;
  dates: Set<string>;
  version: number;
}

/**
 * An index entry that is not committed and that no write can still commit: older than the
 * event's committed version (its write lost, or a later one removed it), of a deleted event
 * (only a create writes version 1, and ids are never reused), or older than any write may take.
 * Items written before stamps existed count as version 0.
 */
function isAbandoned(entry: DateIndexEntry, committed: CommittedIndex | undefined, now: number): boolean {
  if (!entry.stamp) return true;
  if (now - entry.stamp.writtenAt > LEFTOVER_GRACE_MS) return true;
  return committed ? entry.stamp.version <= committed.version : entry.stamp.version > 1;
}

function newStamp(version: number): IndexStamp {
  return { version, writtenAt: Date.now(), writeId: randomUUID().slice(0, 8) };
}

/** The index items of an event: one per date, under its name. */
function indexKeysOf(event: Pick<SpecialEvent, 'name' | 'dates'>): IndexKey[] {
  return event.dates.map((date) => ({ date, name: event.name }));
}

/** The keys of `keys` not in `others` (each once). */
function without(list: IndexKey[], others: IndexKey[]): IndexKey[] {
  const id = (key: IndexKey) => `${key.date}\u0000${key.name}`;
  const seen = new Set(others.map(id));
  return list.filter((key) => !seen.has(id(key)) && seen.add(id(key)));
}

/** Runs `task` on every item, PARALLEL_ITEM_WRITES at a time; rejects with the first failure. */
async function inParallel<T>(items: T[], task: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  let failed = false;
  const worker = async () => {
    try {
      while (next < items.length && !failed) await task(items[next++] as T);
    } catch (error) {
      failed = true; // the other workers stop taking items: the caller is about to give up
      throw error;
    }
  };
  await Promise.all(Array.from({ length: Math.min(PARALLEL_ITEM_WRITES, items.length) }, worker));
}

/** One Query of the `byDate` index: a month's entries inside the range, from `startKey` on. */
type IndexQuery = (month: string, startKey: Record<string, unknown> | undefined, limit: number) => Promise<QueryCommandOutput>;

/**
 * Walks the `byDate` index month by month over a date range and hands out its entries in index
 * order, i.e. by date, then name, then id.
 */
class DateIndexReader {
  consumedReadCapacity = 0;
  private readonly months: string[];
  private readonly query: IndexQuery;
  private monthIndex = 0;
  private exclusiveStartKey: Record<string, unknown> | undefined;
  private buffered: DateIndexEntry[] = [];

  constructor(query: IndexQuery, startDate: string, endDate: string) {
    this.query = query;
    this.months = monthsBetween(startDate, endDate);
  }

  async next(): Promise<DateIndexEntry | undefined> {
    while (this.buffered.length === 0 && this.monthIndex < this.months.length) await this.readMore(32);
    return this.buffered.shift();
  }

  /** Up to `count` distinct event ids of the entries after the current one that pass `wanted`, without consuming them. */
  async upcomingEventIds(count: number, wanted: (eventId: string) => boolean): Promise<string[]> {
    const found = new Set<string>();
    let scanned = 0;
    while (found.size < count) {
      if (scanned === this.buffered.length) {
        if (this.monthIndex >= this.months.length) break;
        await this.readMore(2 * (count - found.size));
        continue;
      }
      const eventId = (this.buffered[scanned++] as DateIndexEntry).eventId;
      if (wanted(eventId)) found.add(eventId);
    }
    return [...found];
  }

  private async readMore(wanted: number): Promise<void> {
    // Index items are ~150 bytes: reading a few more than needed costs nothing extra (4 KB units).
    const response = await this.query(this.months[this.monthIndex] as string, this.exclusiveStartKey, Math.min(1000, Math.max(32, wanted)));
    this.consumedReadCapacity += sumCapacity(response.ConsumedCapacity);
    for (const item of response.Items ?? []) this.buffered.push(keys.dateIndexEntry(item));
    // Only a missing LastEvaluatedKey means the month is exhausted (pages also stop at 1 MB).
    this.exclusiveStartKey = response.LastEvaluatedKey;
    if (!this.exclusiveStartKey) this.monthIndex += 1;
  }
}

function sortedKeys(value: Record<string, unknown>): [string, unknown][] {
  return Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
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

/**
 * A transaction cancelled only because another writer changed or locked the same items (or, for
 * index items, put them with a newer stamp).
 */
function isLostRace(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  if (error.name === 'TransactionConflictException') return true;
  if (error.name !== 'TransactionCanceledException') return false;
  const reasons = (error as { CancellationReasons?: { Code?: string }[] }).CancellationReasons ?? [];
  return reasons.every((reason) => ['None', 'ConditionalCheckFailed', 'TransactionConflict'].includes(reason.Code ?? 'None'));
}
