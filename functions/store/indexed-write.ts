// Committing a write of an event with its month index items, so that readers only ever see a
// committed state and a client only gets an answer that tells what happened. README "Data model".
import { randomUUID } from 'node:crypto';
import { DeleteCommand, TransactWriteCommand, UpdateCommand, type TransactWriteCommandInput } from '@aws-sdk/lib-dynamodb';
import { toBaseItem, type BaseItem, type MonthPlan } from './event-items.ts';
import { liveRecord, type IdempotencyRequest } from './idempotency-records.ts';
import { COMMIT_WINDOW_MS } from './month-index-reader.ts';
import { ConcurrentModificationError, EventNotFoundError, StoreBusyError, WriteOutcomeUnknownError } from './store-errors.ts';
import {
  COMMIT_RESERVE_MS,
  DEFINITE_FAILURES,
  FENCE_RESERVE_MS,
  LEASE_MS,
  MAX_TRANSACTION_ACTIONS,
  PARALLEL_WRITES,
  StoreWriter,
  unmarshallItem,
} from './store-writes.ts';
import { keys, type IndexStamp } from './table-definition.ts';

type TransactItem = NonNullable<TransactWriteCommandInput['TransactItems']>[number];
/** The base item's write, without its concurrency conditions; `leased` for the commit of a large write. */
export type BaseWrite = (leased: boolean) => TransactItem;

/** Lost the version race (or a transaction conflict): re-read and retry. */
export class LostRaceError extends Error {
  override name = 'LostRaceError';
}
/** The idempotency record's condition failed: a request with the same key has committed. */
export class KeyTakenError extends Error {
  override name = 'KeyTakenError';
}

export interface IndexedWrite {
  eventId: string;
  stamp: IndexStamp;
  base: BaseWrite;
  record?: TransactItem | undefined;
  request?: IdempotencyRequest | undefined;
  plan: MonthPlan;
  /** The base item the write read (undefined: a create). */
  current?: BaseItem;
  deletes?: boolean;
}

export class IndexedWriter extends StoreWriter {
  newStamp(version: number): IndexStamp {
    return { version, writtenAt: Date.now(), writeId: randomUUID().slice(0, 8) };
  }

  fitsOneTransaction(plan: MonthPlan, record: unknown): boolean {
    return 1 + (record ? 1 : 0) + plan.puts.length + plan.deletes.length <= MAX_TRANSACTION_ACTIONS;
  }

  /** A large write holds the event: fail at once, telling the client when to retry. */
  checkNoLease(eventId: string, current: BaseItem): void {
    this.checkNoLeaseOf(eventId, current);
  }

  /**
   * Commits the base item's write with its index changes. When everything fits, one
   * TransactWriteItems of the base item (conditioned on its version, no live lease and no
   * fence), the idempotency record, the month items put and those deleted. Otherwise (dates in
   * more than about 48 months): the lease, then the new month items, then the commit of the base
   * item and record (conditioned on holding the lease), then the deletes; a write that stops
   * before its commit leaves month items no reader counts, one that stops after leaves stale
   * ones no reader counts, and lists delete both.
   */
  async commit(write: IndexedWrite): Promise<void> {
    const { plan, current } = write;
    const monthDeletes = plan.deletes.map((key) => ({ Delete: { TableName: this.tableName, Key: key } }));
    const monthPuts = plan.puts.map((item) => ({ Put: { TableName: this.tableName, Item: item } }));
    if (this.fitsOneTransaction(plan, write.record)) {
      await this.commitTransaction(write, [this.conditioned(write, false), ...(write.record ? [write.record] : []), ...monthPuts, ...monthDeletes]);
      return;
    }
    if (current) await this.takeLease(write.eventId, current, write.stamp.writeId);
    try {
      // Before the commit: writes whose failure leaves only uncounted items.
      for (let i = 0; i < monthPuts.length; i += MAX_TRANSACTION_ACTIONS * 4) {
        await Promise.all(
          chunks(monthPuts.slice(i, i + MAX_TRANSACTION_ACTIONS * 4), MAX_TRANSACTION_ACTIONS).map((batch) => {
            this.checkTime(COMMIT_RESERVE_MS);
            return this.client.send(new TransactWriteCommand({ TransactItems: batch, ClientRequestToken: randomUUID() }), { abortSignal: this.signal });
          }),
        );
      }
      // After this, a reader could think these items abandoned (LEFTOVER_GRACE_MS): never commit then.
      if (Date.now() - write.stamp.writtenAt > COMMIT_WINDOW_MS) throw new StoreBusyError('Index items took too long');
    } catch (error) {
      if (current) await this.releaseLease(write.eventId, write.stamp.writeId);
      throw error;
    }
    try {
      await this.commitTransaction(write, [this.conditioned(write, current !== undefined), ...(write.record ? [write.record] : [])]);
    } catch (error) {
      // Not committed (and fenced if unclear): free the event for the next writer.
      if (current && !(error instanceof WriteOutcomeUnknownError)) await this.releaseLease(write.eventId, write.stamp.writeId);
      throw error;
    }
    // The write is committed: a stale item left behind (throttling, the deadline) is one no reader counts.
    for (let i = 0; i < plan.deletes.length && Date.now() < this.deadline - FENCE_RESERVE_MS && !this.signal?.aborted; i += PARALLEL_WRITES) {
      await Promise.all(
        plan.deletes.slice(i, i + PARALLEL_WRITES).map((key) => this.client.send(new DeleteCommand({ TableName: this.tableName, Key: key }), { abortSignal: this.signal })),
      ).catch(() => undefined);
    }
  }

  /** The base item's write with the conditions that serialise writers of the event. */
  private conditioned(write: IndexedWrite, leased: boolean): TransactItem {
    const action = write.base(leased);
    const operation = (action.Put ?? action.Update ?? action.Delete) as { ConditionExpression?: string; ExpressionAttributeValues?: Record<string, unknown> };
    const values: Record<string, unknown> = { ...operation.ExpressionAttributeValues, ':writeId': write.stamp.writeId };
    let condition = operation.ConditionExpression;
    if (write.current) {
      values[':currentVersion'] = write.current.version;
      values[':leaseNow'] = Date.now();
      condition = `version = :currentVersion AND ${leased ? 'leaseId = :writeId' : '(attribute_not_exists(leaseUntil) OR leaseUntil < :leaseNow)'} AND (attribute_not_exists(fencedWrite) OR fencedWrite <> :writeId)`;
    }
    if (action.Delete && !write.current) throw new Error('A delete needs the current item');
    Object.assign(operation, {
      ConditionExpression: condition,
      // Unused values are a ValidationException: only those the expressions name.
      ExpressionAttributeValues: Object.fromEntries(
        Object.entries(values).filter(([name]) => `${condition ?? ''} ${(operation as { UpdateExpression?: string }).UpdateExpression ?? ''}`.includes(name)),
      ),
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
    });
    if (Object.keys(operation.ExpressionAttributeValues ?? {}).length === 0) delete operation.ExpressionAttributeValues;
    return action;
  }

  private async takeLease(eventId: string, current: BaseItem, writeId: string): Promise<void> {
    this.checkTime(COMMIT_RESERVE_MS);
    const now = Date.now();
    try {
      await this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: keys.event(eventId),
          UpdateExpression: 'SET leaseUntil = :until, leaseId = :writeId',
          // Our own lease (a retried call whose first attempt took it) counts as taken.
          ConditionExpression: 'version = :version AND (attribute_not_exists(leaseUntil) OR leaseUntil < :now OR leaseId = :writeId)',
          ExpressionAttributeValues: { ':until': now + LEASE_MS, ':writeId': writeId, ':version': current.version, ':now': now },
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
        { abortSignal: this.signal },
      );
    } catch (error) {
      if (!(error instanceof Error) || error.name !== 'ConditionalCheckFailedException') throw error;
      const found = toBaseItem(unmarshallItem((error as { Item?: unknown }).Item));
      if (!found) throw new EventNotFoundError(eventId);
      if (found.version !== current.version) throw new LostRaceError('The event changed before the lease');
      throw new ConcurrentModificationError(eventId, 'is being changed by a large write; retry the request', ((found.leaseUntil ?? now) - now) / 1000);
    }
  }

  private async releaseLease(eventId: string, writeId: string): Promise<void> {
    if (this.signal?.aborted || Date.now() > this.deadline - FENCE_RESERVE_MS) return;
    await this.client
      .send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: keys.event(eventId),
          UpdateExpression: 'REMOVE leaseUntil, leaseId',
          ConditionExpression: 'leaseId = :writeId',
          ExpressionAttributeValues: { ':writeId': writeId },
        }),
        { abortSignal: this.signal },
      )
      .catch(() => undefined);
  }

  /**
   * The commit: one TransactWriteItems whose ClientRequestToken the SDK resends on its retries,
   * so an attempt that arrives late cannot apply twice (DynamoDB Local honours it too: see
   * test/integration/events-store.test.ts). Sent with its own time limit, not the invocation's
   * signal: an aborted call's outcome is unknown, and the answer must not be decided before it is.
   */
  private async commitTransaction(write: IndexedWrite, items: TransactItem[]): Promise<void> {
    this.checkTime(COMMIT_RESERVE_MS);
    try {
      await this.client.send(new TransactWriteCommand({ TransactItems: items, ClientRequestToken: randomUUID() }), { abortSignal: this.commitSignal() });
    } catch (error) {
      const outcome = await this.settle(write, error);
      if (outcome !== 'committed') throw outcome;
    }
  }

  /** What a failed commit means: an error to throw (the write did not and will not apply), or 'committed'. */
  private async settle(write: IndexedWrite, error: unknown): Promise<Error | 'committed'> {
    if (!(error instanceof Error)) return new Error(String(error));
    // The SDK resends a transaction with the same ClientRequestToken: a retry answers for the
    // first attempt (its result, or TransactionInProgressException while it runs), so a final
    // definite failure means no attempt applied.
    if (DEFINITE_FAILURES.has(error.name)) return this.cancelled(write, error);
    return this.fence(write, error);
  }

  private cancelled(write: IndexedWrite, error: Error): Error {
    if (error.name === 'TransactionConflictException') return new LostRaceError(error.message);
    if (error.name !== 'TransactionCanceledException') return error;
    const reasons = (error as { CancellationReasons?: { Code?: string; Item?: unknown }[] }).CancellationReasons ?? [];
    const [base, record] = reasons;
    if (base?.Code === 'ConditionalCheckFailed') {
      if (!write.current) return new LostRaceError('The id is taken');
      const found = toBaseItem(unmarshallItem(base.Item));
      if (!found) return new EventNotFoundError(write.eventId);
      const lease = (found.leaseUntil ?? 0) - Date.now();
      if (lease > 0 && found.leaseId !== write.stamp.writeId) {
        return new ConcurrentModificationError(write.eventId, 'is being changed by a large write; retry the request', lease / 1000);
      }
      return new LostRaceError('The event changed');
    }
    if (write.record && record?.Code === 'ConditionalCheckFailed') return new KeyTakenError('The Idempotency-Key is taken');
    if (reasons.some((reason) => reason.Code === 'TransactionConflict')) return new LostRaceError('Transaction conflict');
    return error; // throttled: answered 503, nothing applied
  }

  /**
   * The commit may or may not have applied (timeout, lost response, 5xx): make sure it cannot
   * apply later, then look. On an existing event, a conditional UpdateItem sets `fencedWrite` to
   * this write's id while the version is still the one read: every commit's condition excludes
   * its own fenced id, so a late attempt fails. For a create, a marker item without a version at
   * the new id (readers treat it as absent). If the fence finds the commit applied
   * (`lastWriteId`, or the idempotency record), the write succeeded.
   */
  private async fence(write: IndexedWrite, error: Error): Promise<Error | 'committed'> {
    const signal = this.fenceSignal();
    if (!signal) return new WriteOutcomeUnknownError(write.eventId);
    try {
      if (write.current) {
        await this.client.send(
          new UpdateCommand({
            TableName: this.tableName,
            Key: keys.event(write.eventId),
            UpdateExpression: 'SET fencedWrite = :writeId',
            ConditionExpression: 'version = :version',
            ExpressionAttributeValues: { ':writeId': write.stamp.writeId, ':version': write.current.version },
            ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
          }),
          { abortSignal: signal },
        );
      } else {
        // An UpdateItem that creates the marker (PutItem's command would add to every bundle).
        await this.client.send(
          new UpdateCommand({
            TableName: this.tableName,
            Key: keys.event(write.eventId),
            UpdateExpression: 'SET fencedWrite = :writeId',
            ConditionExpression: 'attribute_not_exists(pk)',
            ExpressionAttributeValues: { ':writeId': write.stamp.writeId },
            ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
          }),
          { abortSignal: signal },
        );
      }
      // Fenced: the commit did not apply and never will.
      return new StoreBusyError(`The commit did not complete (${error.name}); nothing was written`);
    } catch (fenceError) {
      if (!(fenceError instanceof Error) || fenceError.name !== 'ConditionalCheckFailedException') return new WriteOutcomeUnknownError(write.eventId);
      const found = unmarshallItem((fenceError as { Item?: unknown }).Item);
      if (found?.lastWriteId === write.stamp.writeId) return 'committed';
      if (!found) return write.deletes ? 'committed' : new EventNotFoundError(write.eventId);
      // Another write committed since the read: ours can no longer apply, but it may have applied before.
      if (write.request) {
        const record = await liveRecord(this.client, write.request, signal).catch(() => undefined);
        if (record?.writeId === write.stamp.writeId) return 'committed';
        if (record === undefined) return new LostRaceError('Another write committed first');
      }
      return new WriteOutcomeUnknownError(write.eventId);
    }
  }
}

function chunks<T>(list: T[], size: number): T[][] {
  return Array.from({ length: Math.ceil(list.length / size) }, (_, i) => list.slice(i * size, (i + 1) * size));
}
