// The special-events store: the only module that knows the DynamoDB key design.
//
// An event is one base item (EVENT#<id> / EVENT), the only record of what is committed, plus one
// index item per month it has dates in (EVENT#<id> / MONTH#<yyyy-mm>#<tag>) whose GSI keys
// (MONTH#<yyyy-mm> / <first date> NUL <name> NUL <id> NUL <stamp>) and `dates` put it in the
// `byMonth` index (and, with two or more dates in the month, in the sparse `byMonthEnd` index,
// by last date). The base item names its index items (`monthTags`); the index may hold more
// (written before a commit, or not yet removed after one), which no reader counts. Protocol,
// failure cases and who cleans what: README "Data model".
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { GetCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { NewSpecialEvent, SpecialEvent, SpecialEventChanges } from '../events/event-schema.ts';
import { fieldAssignments, planMonths, toBaseItem, toStoredEvent, type BaseItem, type StoredEvent } from './event-items.ts';
import { idempotencyRequest, liveRecord, recordPut, type IdempotencyRequest, type IdempotencyScope, type IdempotentOperation } from './idempotency-records.ts';
import { DetailsWriter } from './details-update.ts';
import { IndexedWriter, KeyTakenError, LostRaceError, type BaseWrite } from './indexed-write.ts';
import { ConcurrentModificationError, EventNotFoundError, EventVersionMismatchError, StoreBusyError } from './store-errors.ts';
import { LOST_RACE_BUDGET_MS, MAX_WRITE_ATTEMPTS } from './store-writes.ts';
import { keys } from './table-definition.ts';

export type { StoredEvent } from './event-items.ts';
export type { IdempotencyScope } from './idempotency-records.ts';
export type { ListEventsQuery, ListEventsResult } from './month-index-reader.ts';
export { EventsReader } from './month-index-reader.ts';
export {
  ConcurrentModificationError,
  EventNotFoundError,
  EventVersionMismatchError,
  IdempotencyKeyReusedError,
  StoreBusyError,
  WriteOutcomeUnknownError,
} from './store-errors.ts';


export class EventsStore {
  private readonly client: DynamoDBDocumentClient;
  private readonly tableName: string;
  private readonly idempotencyTableName: string | undefined;
  private readonly signal: AbortSignal | undefined;
  private readonly writer: IndexedWriter;
  private readonly details: DetailsWriter;

  /**
   * `signal` aborts every DynamoDB call and retry wait of this store (the invocation's deadline);
   * `deadline` (epoch ms) is when that happens: no write starts that could still be in flight then.
   */
  constructor(client: DynamoDBDocumentClient, tableName: string, idempotencyTableName?: string, signal?: AbortSignal, deadline?: number) {
    this.client = client;
    this.tableName = tableName;
    this.idempotencyTableName = idempotencyTableName;
    this.signal = signal;
    this.writer = new IndexedWriter(client, tableName, signal, deadline);
    this.details = new DetailsWriter(client, tableName, signal, deadline);
  }

  /**
   * Stores a new event. With an idempotency scope, the event and its idempotency record are
   * written in the same transaction, so a key creates at most one event however the requests
   * race, time out or lose their responses; a later request with the key gets the event it
   * created (or IdempotencyKeyReusedError if its event differs).
   */
  async createEvent(input: NewSpecialEvent, idempotency?: IdempotencyScope): Promise<StoredEvent> {
    const request = idempotency && this.request('create', idempotency, input);
    for (let attempt = 1; attempt <= MAX_WRITE_ATTEMPTS; attempt++) {
      const event: SpecialEvent = { eventId: randomUUID(), ...input };
      const stamp = this.writer.newStamp(1);
      const now = new Date(stamp.writtenAt);
      const plan = planMonths(event.eventId, undefined, event, stamp);
      const base: BaseWrite = () => ({
        Put: {
          TableName: this.tableName,
          Item: {
            ...keys.event(event.eventId),
            ...event,
            version: 1,
            monthTags: plan.monthTags,
            lastWriteId: stamp.writeId,
            createdAt: now.toISOString(),
            updatedAt: now.toISOString(),
          },
          ConditionExpression: 'attribute_not_exists(pk)',
        },
      });
      const record = request && recordPut(request, { event }, stamp.writeId, now);
      // A large create writes index items before its commit: look for the first request's event first.
      if (request && !this.writer.fitsOneTransaction(plan, record)) {
        const replay = await this.replayOf(request);
        if (replay) return replay;
      }
      try {
        await this.writer.commit({ eventId: event.eventId, stamp, base, record, plan, request });
        return { event, version: 1 };
      } catch (error) {
        if (!request || !(error instanceof KeyTakenError || error instanceof LostRaceError)) throw error;
      }
      // The key is taken (or a request with it is committing right now): answer as the first did.
      const replay = await this.replayOf(request);
      if (replay) return replay;
      await sleep(Math.random() * 10 * attempt, undefined, { signal: this.signal });
    }
    throw new StoreBusyError('Idempotency-Key requests kept colliding');
  }

  async getEvent(eventId: string): Promise<StoredEvent | undefined> {
    const base = await this.getBase(eventId);
    return base && { event: base.event, version: base.version };
  }

  /**
   * Applies `changes` to the current event. Without `expectedVersion` a lost race is retried
   * against the new current state (last writer wins); with it, a changed event fails with
   * EventVersionMismatchError (If-Match). With an idempotency scope, a repeat of the request
   * gets the first answer.
   */
  async updateEvent(eventId: string, changes: SpecialEventChanges, expectedVersion?: number, idempotency?: IdempotencyScope): Promise<StoredEvent> {
    const request = idempotency && this.request('update', idempotency, { eventId, changes, expectedVersion });
    const { name, dates, ...details } = changes;
    // The index items carry the name and the dates; the other fields live in the base item only.
    if (!request && name === undefined && dates === undefined) return this.details.updateDetails(eventId, details, expectedVersion);
    return this.idempotent(request, (record) => toStoredEvent({ ...(record.event as object), version: record.version }), () =>
      this.writeWithRetry(eventId, expectedVersion, async (current, stamp) => {
        const next: SpecialEvent = { ...current.event, ...changes };
        const plan = planMonths(eventId, current, next, stamp);
        const fields = fieldAssignments(next);
        const base: BaseWrite = (leased) => ({
          Update: {
            TableName: this.tableName,
            Key: keys.event(eventId),
            UpdateExpression:
              `SET ${[...fields.assignments, 'version = :version', 'monthTags = :monthTags', 'lastWriteId = :writeId', 'updatedAt = :now'].join(', ')}` +
              (leased ? ' REMOVE leaseUntil, leaseId' : ''),
            ExpressionAttributeNames: fields.names,
            ExpressionAttributeValues: {
              ...fields.values,
              ':version': stamp.version,
              ':monthTags': plan.monthTags,
              ':now': new Date(stamp.writtenAt).toISOString(),
            },
          },
        });
        const stored = { event: next, version: stamp.version };
        const record = request && recordPut(request, stored, stamp.writeId, new Date(stamp.writtenAt));
        await this.writer.commit({ eventId, stamp, base, record, plan, current, request });
        return stored;
      }),
    );
  }

  /** Deletes the event (and its index items); with `expectedVersion`, only that version. */
  async deleteEvent(eventId: string, expectedVersion?: number, idempotency?: IdempotencyScope): Promise<void> {
    const request = idempotency && this.request('delete', idempotency, { eventId, expectedVersion });
    await this.idempotent(request, () => undefined, () =>
      this.writeWithRetry(eventId, expectedVersion, async (current, stamp) => {
        const plan = planMonths(eventId, current, undefined, stamp);
        const base: BaseWrite = () => ({ Delete: { TableName: this.tableName, Key: keys.event(eventId) } });
        const record = request && recordPut(request, { deleted: true }, stamp.writeId, new Date(stamp.writtenAt));
        await this.writer.commit({ eventId, stamp, base, record, plan, current, request, deletes: true });
      }),
    );
  }

  private request(operation: IdempotentOperation, scope: IdempotencyScope, input: unknown): IdempotencyRequest {
    return idempotencyRequest(this.idempotencyTableName, operation, scope, input);
  }

  /** The event an earlier create with the same Idempotency-Key created, if its record is live. */
  private async replayOf(request: IdempotencyRequest): Promise<StoredEvent | undefined> {
    const record = await liveRecord(this.client, request, this.signal);
    return record && toStoredEvent({ ...(record.event as object), version: 1 });
  }

  /**
   * Runs `write` unless the key already answered: then the first answer again. A write that
   * fails because the event changed or vanished, or because the key was taken meanwhile, looks
   * again (the request with the key may have been the one that changed it).
   */
  private async idempotent<T>(request: IdempotencyRequest | undefined, answer: (record: Record<string, unknown>) => T, write: () => Promise<T>): Promise<T> {
    if (!request) return write();
    const first = await liveRecord(this.client, request, this.signal);
    if (first) return answer(first);
    try {
      return await write();
    } catch (error) {
      const retryable = error instanceof KeyTakenError || error instanceof EventNotFoundError || error instanceof EventVersionMismatchError;
      if (!retryable) throw error;
      const record = await liveRecord(this.client, request, this.signal);
      if (record) return answer(record);
      if (error instanceof KeyTakenError) throw new ConcurrentModificationError('', 'is being written by a request with the same Idempotency-Key');
      throw error;
    }
  }

  /** A strongly consistent read of the base item. */
  private async getBase(eventId: string): Promise<BaseItem | undefined> {
    const { Item } = await this.client.send(new GetCommand({ TableName: this.tableName, Key: keys.event(eventId), ConsistentRead: true }), {
      abortSignal: this.signal,
    });
    return toBaseItem(Item);
  }

  /**
   * Read, check, write: the commit's version condition makes it safe. A lost race is re-read and
   * retried with jitter, at most MAX_WRITE_ATTEMPTS times within LOST_RACE_BUDGET_MS; a lease
   * held by a large write fails at once (ConcurrentModificationError, 409 with Retry-After).
   */
  private async writeWithRetry<T>(eventId: string, expectedVersion: number | undefined, write: (current: BaseItem, stamp: ReturnType<IndexedWriter['newStamp']>) => Promise<T>): Promise<T> {
    const started = Date.now();
    for (let round = 1; ; round++) {
      const current = await this.getBase(eventId);
      if (!current) throw new EventNotFoundError(eventId);
      if (expectedVersion !== undefined && current.version !== expectedVersion) throw new EventVersionMismatchError(eventId, current.version);
      this.writer.checkNoLease(eventId, current);
      try {
        return await write(current, this.writer.newStamp(current.version + 1));
      } catch (error) {
        if (!(error instanceof LostRaceError)) throw error;
        if (round >= MAX_WRITE_ATTEMPTS || Date.now() - started > LOST_RACE_BUDGET_MS) {
          throw new ConcurrentModificationError(eventId, 'was changed by other requests at the same time; retry the request');
        }
        await sleep(Math.random() * 10 * round, undefined, { signal: this.signal });
      }
    }
  }
}
