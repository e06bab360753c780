// The special-events store: every write of an event, from the handler's call to DynamoDB's, in
// this file. An event is one base item (EVENT#<id> / EVENT) and one month item per month it has
// dates in (EVENT#<id> / MONTH#<yyyy-mm>), which the `byMonth` and `byMonthEnd` indexes list.
// Every write (create, update, delete, import) is ONE TransactWriteItems of the base item, under
// the one version condition, with its idempotency record, its change item (the feed's outbox) and
// its month items: read, check, commit, retry a lost race. Protocol, data model and failure cases: functions/store/README.md.
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  GetCommand,
  TransactWriteCommand,
  UpdateCommand,
  type DynamoDBDocumentClient,
  type TransactWriteCommandInput,
} from '@aws-sdk/lib-dynamodb';
import { changeItem, commitTime } from '../changes/change-feed.ts';
import { EVENT_FIELDS } from '../events/event-fields.ts';
import type { NewSpecialEvent, SpecialEvent, SpecialEventChanges } from '../events/event-schema.ts';
import {
  classifyCommitError,
  fenceUpdate,
  MAX_VERSION,
  monthLimitProblem,
  planMonths,
  storedVersionProblem,
  toBaseItem,
  toStoredEvent,
  unmarshallItem,
  versionCondition,
  type BaseItem,
  type Item,
  type StoredEvent,
} from './event-items.ts';
import { idempotencyRequest, liveRecord, recordPut, type IdempotencyRequest, type IdempotencyScope } from './idempotency-records.ts';
import {
  ConcurrentModificationError,
  EventNotFoundError,
  EventVersionMismatchError,
  IdempotencyKeyReusedError,
  neverReachedDynamoDb,
  StoreBusyError,
  TooManyMonthsError,
  VersionLimitError,
  WriteOutcomeUnknownError,
} from './store-errors.ts';
import { keys } from './table-definition.ts';

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

// A commit starts only with COMMIT_RESERVE_MS left before the deadline (its call, then the fence if
// its outcome is unclear); the fence (one small write) gets FENCE_TIMEOUT_MS, else the outcome stays
// unknown (504); a write that keeps losing the version race tries MAX_WRITE_ATTEMPTS times within
// LOST_RACE_BUDGET_MS, then answers 409.
export const COMMIT_RESERVE_MS = 2_500,
  FENCE_RESERVE_MS = 1_000,
  MAX_COMMIT_MS = 6_000,
  FENCE_TIMEOUT_MS = 1_500;
export const MAX_WRITE_ATTEMPTS = 8,
  LOST_RACE_BUDGET_MS = 1_000;
// An import's write that did not commit, or whose outcome is unknown, is sent IMPORT_ATTEMPTS times
// in all, pausing IMPORT_RESEND_PAUSE_MS (doubling, with jitter) between them: about 15 s in all.
export const IMPORT_ATTEMPTS = 5,
  IMPORT_RESEND_PAUSE_MS = 1_000;

export type ImportOutcome = 'created' | 'unchanged' | 'replaced';

type TransactItem = NonNullable<TransactWriteCommandInput['TransactItems']>[number];

/** Lost the version race (or a transaction conflict): re-read and retry. */
class LostRaceError extends Error {
  override name = 'LostRaceError';
}
/** The idempotency record's condition failed: a request with the same key has committed. */
class KeyTakenError extends Error {
  override name = 'KeyTakenError';
  /** The key's record, when it has been read already (the fence reads it). */
  readonly record: Item | undefined;
  constructor(message: string, record?: Item) {
    super(message);
    this.record = record;
  }
}

/** One write: the base item it read (none: a create), what replaces it (none: a delete), and the answer its record keeps. */
interface Write {
  eventId: string;
  current: BaseItem | undefined;
  next: SpecialEvent | undefined;
  version?: number;
  request?: IdempotencyRequest | undefined;
  answer?: Item;
}

export class EventsStore {
  protected readonly client: DynamoDBDocumentClient;
  protected readonly tableName: string;
  private readonly idempotencyTableName: string | undefined;
  private readonly signal: AbortSignal | undefined;
  private readonly deadline: number;

  /**
   * `signal` aborts every DynamoDB call and retry wait of this store (the invocation's deadline);
   * `deadline` (epoch ms) is when that happens: no write starts that could still be in flight then.
   */
  constructor(client: DynamoDBDocumentClient, tableName: string, idempotencyTableName?: string, signal?: AbortSignal, deadline?: number) {
    this.client = client;
    this.tableName = tableName;
    this.idempotencyTableName = idempotencyTableName;
    this.signal = signal;
    this.deadline = deadline ?? Number.POSITIVE_INFINITY;
  }

  /**
   * Stores a new event. With an idempotency scope, the event and its record are one transaction,
   * so a key creates at most one event however requests race, time out or lose their answers; a
   * later request with the key gets the event it created (IdempotencyKeyReusedError if it differs).
   */
  async createEvent(input: NewSpecialEvent, idempotency?: IdempotencyScope): Promise<StoredEvent> {
    const request = idempotency && idempotencyRequest(this.idempotencyTableName, 'create', idempotency, input);
    return this.idempotent(
      request,
      (record) => toStoredEvent({ ...(record.event as object), version: 1 }),
      () =>
        this.retrying('', async () => {
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
    return this.idempotent(
      request,
      (record) => toStoredEvent({ ...(record.event as object), version: record.version }),
      () =>
        this.retrying(eventId, async () => {
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
    await this.idempotent(
      request,
      () => undefined,
      () =>
        this.retrying(eventId, async () => {
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
        const outcome = await this.retrying(eventId, async () => {
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

  /**
   * The one bounded retry of every writer: `attempt` again after a lost race, with jitter, at most
   * MAX_WRITE_ATTEMPTS times within LOST_RACE_BUDGET_MS; then a 409 with Retry-After.
   */
  private async retrying<T>(eventId: string, attempt: () => Promise<T>): Promise<T> {
    const started = Date.now();
    for (let round = 1; ; round++) {
      try {
        return await attempt();
      } catch (error) {
        if (!(error instanceof LostRaceError)) throw error;
        if (round >= MAX_WRITE_ATTEMPTS || Date.now() - started > LOST_RACE_BUDGET_MS)
          throw new ConcurrentModificationError(eventId, 'was changed by other requests at the same time; retry the request');
        await sleep(Math.random() * 10 * round, undefined, { signal: this.signal });
      }
    }
  }

  /**
   * Runs `write`; if this attempt wrote nothing (the key was taken; the event changed or vanished,
   * which the request with the key may have done; every race lost; DynamoDB busy), the key's first
   * answer, when it has one: a resend after a 504 whose first attempt did apply must get that
   * answer, never a 409 or 503 that says nothing was written. The commit writes the record in its
   * transaction, so no read of it is needed before.
   */
  private async idempotent<T>(request: IdempotencyRequest | undefined, answer: (record: Item) => T, write: () => Promise<T>): Promise<T> {
    if (!request) return write();
    try {
      return await write();
    } catch (error) {
      const wroteNothing =
        error instanceof KeyTakenError ||
        error instanceof EventNotFoundError ||
        error instanceof EventVersionMismatchError ||
        error instanceof ConcurrentModificationError ||
        error instanceof StoreBusyError;
      if (!wroteNothing) throw error;
      // A refusal (or a taken key) whose record cannot be read is a refusal: this attempt wrote
      // nothing, and the client resends it (with the key) as told. A taken key is a 503, which
      // every write documents (a POST has no 409).
      const keyUnread = new StoreBusyError('The Idempotency-Key is taken and its record could not be read; nothing was written');
      const refusal = error instanceof KeyTakenError ? keyUnread : error;
      const refused = refusal instanceof ConcurrentModificationError || refusal instanceof StoreBusyError;
      const known = error instanceof KeyTakenError ? error.record : undefined;
      const record =
        known ??
        (await liveRecord(this.client, request, this.signal).catch((readError: unknown) => {
          if (refused && !(readError instanceof IdempotencyKeyReusedError)) throw refusal;
          throw readError;
        }));
      if (record) return answer(record);
      throw refusal;
    }
  }

  /** A strongly consistent read of the base item. */
  private async getBase(eventId: string): Promise<BaseItem | undefined> {
    return toBaseItem(
      (
        await this.client.send(new GetCommand({ TableName: this.tableName, Key: keys.event(eventId), ConsistentRead: true }), {
          abortSignal: this.signal,
        })
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

  /**
   * The commit: one TransactWriteItems of the base item (under versionCondition), the idempotency
   * record, the change item (so a change exists exactly when the write committed) and the month
   * items put and deleted. Its ClientRequestToken makes the SDK's resends
   * idempotent; it is sent with its own time limit, not the invocation's signal (an aborted call's
   * outcome is unknown, and the answer must not be decided before it is).
   */
  private async commit(write: Write): Promise<void> {
    const { eventId, current, next, request } = write;
    if (next) {
      const problem = monthLimitProblem(next.dates);
      if (problem) throw new TooManyMonthsError(problem);
    }
    const version = write.version ?? (current?.version ?? 0) + 1;
    if (next && version > MAX_VERSION) throw new VersionLimitError(eventId, current?.version ?? version);
    // No write starts once the answer is decided, or so late that its outcome could not be learned before then.
    this.signal?.throwIfAborted();
    if (Date.now() > this.deadline - COMMIT_RESERVE_MS) throw new StoreBusyError('Not enough time left to write');
    const writeId = randomUUID();
    // Taken after the read that decided the version: the change's time, after the event's previous one.
    const now = commitTime(new Date(), current?.updatedAt);
    const condition = { ...versionCondition(current?.version, writeId), ReturnValuesOnConditionCheckFailure: 'ALL_OLD' as const };
    const item = {
      ...keys.event(eventId),
      ...next,
      version,
      lastWriteId: writeId,
      createdAt: current?.createdAt ?? now.toISOString(),
      updatedAt: now.toISOString(),
    };
    const base: TransactItem = next
      ? { Put: { TableName: this.tableName, Item: item, ...condition } }
      : { Delete: { TableName: this.tableName, Key: keys.event(eventId), ...condition } };
    const plan = planMonths(eventId, current?.event, next);
    const items: TransactItem[] = [
      base,
      ...(request ? [recordPut(request, write.answer ?? {}, writeId, now)] : []),
      {
        Put: { TableName: this.tableName, Item: changeItem({ id: writeId, eventId, previous: current?.event, next, version, time: now }) },
      },
      ...plan.puts.map((Item) => ({ Put: { TableName: this.tableName, Item } })),
      ...plan.deletes.map((Key) => ({ Delete: { TableName: this.tableName, Key } })),
    ];
    try {
      // At most MAX_COMMIT_MS, ending FENCE_RESERVE_MS before the deadline, left for the fence.
      const abortSignal = AbortSignal.timeout(Math.min(MAX_COMMIT_MS, this.deadline - Date.now() - FENCE_RESERVE_MS));
      await this.client.send(new TransactWriteCommand({ TransactItems: items, ClientRequestToken: writeId }), { abortSignal });
    } catch (error) {
      if (!(error instanceof Error)) throw error;
      const outcome = classifyCommitError(error, neverReachedDynamoDb(error), request !== undefined);
      switch (outcome.kind) {
        case 'base-changed':
          if (current && !outcome.found) throw new EventNotFoundError(eventId);
          throw new LostRaceError('The event changed since it was read');
        case 'key-taken':
          throw new KeyTakenError('The Idempotency-Key is taken');
        case 'conflict':
          throw new LostRaceError('Transaction conflict');
        case 'not-applied':
          if (neverReachedDynamoDb(error))
            throw new StoreBusyError(
              `DynamoDB could not be reached (${(error as { code?: string }).code ?? error.name}); nothing was written`,
            );
          throw error;
        case 'unknown':
          await this.fence(write, writeId, error);
      }
    }
  }

  /**
   * The commit may or may not have applied (timeout, lost response, 5xx): make sure it cannot
   * apply later, then look. On an existing event, a conditional UpdateItem adds this write's id to
   * `fencedWrites` while the version is still the one read: the commit's condition excludes its
   * own fenced id, so a late attempt fails. Added to a set, never set alone: another write fenced
   * at the same version must not lift this fence. For a create, the same UpdateItem where no item is
   * leaves a marker without a version at the new id (readers treat it as absent). Returns if the
   * write applied; throws otherwise.
   */
  private async fence(write: Write, writeId: string, error: Error): Promise<void> {
    // At most FENCE_TIMEOUT_MS, ending 200 ms before the deadline; no fence with under 200 ms left.
    const budget = this.deadline - Date.now() - 200;
    if (budget < 200) throw new WriteOutcomeUnknownError(write.eventId, `${error.name}; no time left to fence`);
    const signal = AbortSignal.timeout(Math.min(budget, FENCE_TIMEOUT_MS));
    try {
      await this.client.send(
        new UpdateCommand({
          ...fenceUpdate(this.tableName, write.eventId, write.current?.version, writeId),
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
        { abortSignal: signal },
      );
    } catch (fenceError) {
      if (!(fenceError instanceof Error) || fenceError.name !== 'ConditionalCheckFailedException')
        throw new WriteOutcomeUnknownError(write.eventId, `${error.name}, then the fence: ${String(fenceError)}`);
      const found = unmarshallItem((fenceError as { Item?: unknown }).Item);
      if (found?.lastWriteId === writeId) return;
      // Gone: as a delete without a key asked; else 404, unless the key's record says the write was ours (idempotent()).
      if (!found) {
        if (!write.next && !write.request) return;
        throw new EventNotFoundError(write.eventId);
      }
      // Another write committed since the read: ours can no longer apply, but may have applied before (an unreadable record: unknown).
      // The key's record names the one write that holds the key: ours, or another, in which case ours never applied.
      if (write.request) {
        const record = await liveRecord(this.client, write.request, signal).catch((readError: unknown) => {
          if (readError instanceof IdempotencyKeyReusedError) throw readError; // another request's record: ours never applied
          return null;
        });
        if (record?.writeId === writeId) return;
        if (record === undefined) throw new LostRaceError('Another write committed first');
        if (record) throw new KeyTakenError('The Idempotency-Key is held by an earlier attempt', record);
      }
      throw new WriteOutcomeUnknownError(write.eventId, `${error.name}: ${error.message}; another write committed since`);
    }
    // Fenced: the commit did not apply and never will.
    throw new StoreBusyError(`The commit did not complete (${error.name}); nothing was written`);
  }
}
