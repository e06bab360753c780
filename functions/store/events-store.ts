// The special-events store: create, read, update, delete and import of an event, each a read,
// a check and one commit (event-commit.ts), retried after a lost race and answered from its
// Idempotency-Key's record when it wrote nothing (write-retries.ts). An event is one base item
// (EVENT#<id> / EVENT) and one month item per month it has dates in (EVENT#<id> / MONTH#<yyyy-mm>),
// which the `byMonth` and `byMonthEnd` indexes list (read by month-index-reader.ts). Protocol, data
// model and failure cases: functions/store/README.md.
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { GetCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { EVENT_FIELDS } from '../events/event-fields.ts';
import type { NewSpecialEvent, SpecialEvent, SpecialEventChanges } from '../events/event-schema.ts';
import { EventCommitter } from './event-commit.ts';
import { storedVersionProblem, toBaseItem, toStoredEvent, type BaseItem, type StoredEvent } from './event-items.ts';
import { idempotencyRequest, type IdempotencyScope } from './idempotency-records.ts';
import {
  ConcurrentModificationError,
  EventNotFoundError,
  EventVersionMismatchError,
  StoreBusyError,
  WriteOutcomeUnknownError,
} from './store-errors.ts';
import { keys } from './table-definition.ts';
import { answeringFromRecord, retryingLostRaces } from './write-retries.ts';

export type { StoredEvent } from './event-items.ts';
export { EventsReader, type ListEventsQuery, type ListEventsResult } from './month-index-reader.ts';
export {
  ConcurrentModificationError,
  EventNotFoundError,
  EventVersionMismatchError,
  IdempotencyKeyReusedError,
  StoreBusyError,
  WriteOutcomeUnknownError,
} from './store-errors.ts';

// An import's write that did not commit, or whose outcome is unknown, is sent IMPORT_ATTEMPTS times
// in all, pausing IMPORT_RESEND_PAUSE_MS (doubling, with jitter) between them: about 15 s in all.
export const IMPORT_ATTEMPTS = 5,
  IMPORT_RESEND_PAUSE_MS = 1_000;

export type ImportOutcome = 'created' | 'unchanged' | 'replaced';

export class EventsStore extends EventCommitter {
  private readonly idempotencyTableName: string | undefined;

  /**
   * `signal` aborts every DynamoDB call and retry wait of this store (the invocation's deadline);
   * `deadline` (epoch ms) is when that happens: no write starts that could still be in flight then.
   */
  constructor(client: DynamoDBDocumentClient, tableName: string, idempotencyTableName?: string, signal?: AbortSignal, deadline?: number) {
    super(client, tableName, signal, deadline);
    this.idempotencyTableName = idempotencyTableName;
  }

  /**
   * Stores a new event. With an idempotency scope, the event and its record are one transaction,
   * so a key creates at most one event however requests race, time out or lose their answers; a
   * later request with the key gets the event it created (IdempotencyKeyReusedError if it differs).
   */
  async createEvent(input: NewSpecialEvent, idempotency?: IdempotencyScope): Promise<StoredEvent> {
    const request = idempotency && idempotencyRequest(this.idempotencyTableName, 'create', idempotency, input);
    return answeringFromRecord(
      this,
      request,
      (record) => toStoredEvent({ ...(record.event as object), version: 1 }),
      () =>
        retryingLostRaces('', this.signal, async () => {
          const event: SpecialEvent = { eventId: randomUUID(), ...input };
          await this.commit({ eventId: event.eventId, current: undefined, next: event, request, answer: { event } });
          return { event, version: 1 };
        }),
    );
  }

  async getEvent(eventId: string): Promise<StoredEvent | undefined> {
    return this.getBase(eventId).then((base) => base && { event: base.event, version: base.version });
  }

  /**
   * Applies `changes` to the current event. Without `expectedVersion` a lost race is retried
   * against the new current state (last writer wins); with it, a changed event fails with
   * EventVersionMismatchError (If-Match). With an idempotency scope, a repeat gets the first answer.
   */
  async updateEvent(
    eventId: string,
    changes: SpecialEventChanges,
    expectedVersion?: number,
    idempotency?: IdempotencyScope,
  ): Promise<StoredEvent> {
    const request =
      idempotency && idempotencyRequest(this.idempotencyTableName, 'update', idempotency, { eventId, changes, expectedVersion });
    return answeringFromRecord(
      this,
      request,
      (record) => toStoredEvent({ ...(record.event as object), version: record.version }),
      () =>
        retryingLostRaces(eventId, this.signal, async () => {
          const current = await this.readForWrite(eventId, expectedVersion);
          const next: SpecialEvent = { ...current.event, ...changes };
          const version = current.version + 1;
          await this.commit({ eventId, current, next, request, answer: { event: next, version } });
          return { event: next, version };
        }),
    );
  }

  /** Deletes the event and its month items; with `expectedVersion`, only that version. */
  async deleteEvent(eventId: string, expectedVersion?: number, idempotency?: IdempotencyScope): Promise<void> {
    const request = idempotency && idempotencyRequest(this.idempotencyTableName, 'delete', idempotency, { eventId, expectedVersion });
    await answeringFromRecord(
      this,
      request,
      () => undefined,
      () =>
        retryingLostRaces(eventId, this.signal, async () => {
          const current = await this.readForWrite(eventId, expectedVersion);
          await this.commit({ eventId, current, next: undefined, request, answer: { deleted: true } });
        }),
    );
  }

  /**
   * Writes an exported event under its own id and version (the operators' import). Absent:
   * created as it was. Present with the same fields: left alone. Present with other fields: the
   * file wins, through updateEvent (the version grows).
   *
   * A write that did not commit (busy, lost every race) or whose outcome is unknown is sent again
   * after a pause, IMPORT_ATTEMPTS times in all, as API.md tells a client to resend a 409, 503 or
   * 504: an import is idempotent, so a resend cannot write twice. A resend that finds the file's
   * event already in place after an unknown outcome reports what that write was (it applied).
   */
  async importEvent(stored: StoredEvent): Promise<ImportOutcome> {
    const problem = storedVersionProblem(stored.version);
    if (problem) throw new Error(`The event ${stored.event.eventId} cannot be imported: ${problem}`);
    const { eventId, ...fields } = stored.event;
    let attempted: ImportOutcome = 'unchanged';
    let appliedUnseen: ImportOutcome | undefined;
    for (let attempt = 1; ; attempt++) {
      try {
        const outcome = await retryingLostRaces(eventId, this.signal, async () => {
          const current = await this.getEvent(eventId);
          if (current) {
            if (EVENT_FIELDS.every((field) => JSON.stringify(current.event[field]) === JSON.stringify(stored.event[field])))
              return 'unchanged';
            attempted = 'replaced';
            await this.updateEvent(eventId, fields);
            return 'replaced';
          }
          attempted = 'created';
          await this.commit({ eventId, current: undefined, next: stored.event, version: stored.version });
          return 'created';
        });
        return outcome === 'unchanged' && appliedUnseen ? appliedUnseen : outcome;
      } catch (error) {
        const resend =
          error instanceof StoreBusyError || error instanceof WriteOutcomeUnknownError || error instanceof ConcurrentModificationError;
        if (!resend || attempt >= IMPORT_ATTEMPTS) throw error;
        if (error instanceof WriteOutcomeUnknownError) appliedUnseen = attempted;
        await sleep(IMPORT_RESEND_PAUSE_MS * 2 ** (attempt - 1) * (0.5 + Math.random() / 2), undefined, { signal: this.signal });
      }
    }
  }

  /** A strongly consistent read of the base item. */
  private async getBase(eventId: string): Promise<BaseItem | undefined> {
    return toBaseItem(
      (
        await this.client.send(
          new GetCommand({ TableName: this.tableName, Key: keys.event(eventId), ConsistentRead: true }),
          this.options(),
        )
      ).Item,
    );
  }

  private async readForWrite(eventId: string, expectedVersion: number | undefined): Promise<BaseItem> {
    const current = await this.getBase(eventId);
    if (!current) throw new EventNotFoundError(eventId);
    // An expected version that is no stored version (past MAX_VERSION, or not whole) matches nothing: a 412.
    if (expectedVersion !== undefined && current.version !== expectedVersion) throw new EventVersionMismatchError(eventId, current.version);
    return current;
  }
}
