// The commit of one write of an event, and the fence when its outcome is unclear. Every write
// (create, update, delete, import) ends here: ONE TransactWriteItems of the base item, under the one
// version condition, with its idempotency record, its change item (the feed's outbox) and its month
// items. Protocol, data model and failure cases: functions/store/README.md.
import { randomUUID } from 'node:crypto';
import { TransactWriteCommand, UpdateCommand, type DynamoDBDocumentClient, type TransactWriteCommandInput } from '@aws-sdk/lib-dynamodb';
import { changeItem, commitTime } from '../changes/change-feed.ts';
import type { SpecialEvent } from '../events/event-schema.ts';
import {
  classifyCommitError,
  fenceUpdate,
  MAX_VERSION,
  monthLimitProblem,
  planMonths,
  unmarshallItem,
  versionCondition,
  type BaseItem,
  type Item,
} from './event-items.ts';
import { liveRecord, recordPut, type IdempotencyRequest } from './idempotency-records.ts';
import {
  EventNotFoundError,
  IdempotencyKeyReusedError,
  neverReachedDynamoDb,
  StoreBusyError,
  TooManyMonthsError,
  VersionLimitError,
  WriteOutcomeUnknownError,
} from './store-errors.ts';
import { keys } from './table-definition.ts';
import { TableStore } from './table-store.ts';

// A commit starts only with COMMIT_RESERVE_MS left before the deadline (its call, then the fence if
// its outcome is unclear); the fence (one small write) gets FENCE_TIMEOUT_MS, else the outcome stays
// unknown (504).
export const COMMIT_RESERVE_MS = 2_500,
  FENCE_RESERVE_MS = 1_000,
  MAX_COMMIT_MS = 6_000,
  FENCE_TIMEOUT_MS = 1_500;

type TransactItem = NonNullable<TransactWriteCommandInput['TransactItems']>[number];

/** Lost the version race (or a transaction conflict): re-read and retry. */
export class LostRaceError extends Error {
  override name = 'LostRaceError';
}
/** The idempotency record's condition failed: a request with the same key has committed. */
export class KeyTakenError extends Error {
  override name = 'KeyTakenError';
  /** The key's record, when it has been read already (the fence reads it). */
  readonly record: Item | undefined;
  constructor(message: string, record?: Item) {
    super(message);
    this.record = record;
  }
}

/** One write: the base item it read (none: a create), what replaces it (none: a delete), and the answer its record keeps. */
export interface Write {
  eventId: string;
  current: BaseItem | undefined;
  next: SpecialEvent | undefined;
  version?: number;
  request?: IdempotencyRequest | undefined;
  answer?: Item;
}

/** The write path's last step, under the invocation's deadline; EventsStore builds each Write. */
export abstract class EventCommitter extends TableStore {
  /** When the invocation's answer is decided (epoch ms): no write starts that could still be in flight then. */
  protected readonly deadline: number;

  constructor(client: DynamoDBDocumentClient, tableName: string, signal?: AbortSignal, deadline?: number) {
    super(client, tableName, signal);
    this.deadline = deadline ?? Number.POSITIVE_INFINITY;
  }

  /**
   * The commit: one TransactWriteItems of the base item (under versionCondition), the idempotency
   * record, the change item (so a change exists exactly when the write committed) and the month
   * items put and deleted. Its ClientRequestToken makes the SDK's resends
   * idempotent; it is sent with its own time limit, not the invocation's signal (an aborted call's
   * outcome is unknown, and the answer must not be decided before it is).
   */
  protected async commit(write: Write): Promise<void> {
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
