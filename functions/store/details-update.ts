// A change of location, description or price alone: the index items carry only the name and the
// dates, so this is one conditional UpdateItem with no read before it and no transaction.
import { randomUUID } from 'node:crypto';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { NewSpecialEvent } from '../events/event-schema.ts';
import { fieldAssignments, toBaseItem, toStoredEvent, type StoredEvent } from './event-items.ts';
import { ConcurrentModificationError, EventNotFoundError, EventVersionMismatchError, StoreBusyError, WriteOutcomeUnknownError } from './store-errors.ts';
import { keys } from './table-definition.ts';
import { COMMIT_RESERVE_MS, DEFINITE_FAILURES, LOST_RACE_BUDGET_MS, MAX_WRITE_ATTEMPTS, StoreWriter, unmarshallItem } from './store-writes.ts';

export class DetailsWriter extends StoreWriter {
  /**
   * A change of location, description or price alone: one conditional UpdateItem that returns
   * the new event, with no read before it and no transaction. Its write id (`lastWriteId`) makes
   * a retry of the same call idempotent, as ClientRequestToken does for transactions: when the
   * SDK resends it after a lost response, the condition fails on our own id and the stored event
   * is the answer (not a second version, nor a 412 for an If-Match the first attempt satisfied).
   */
  async updateDetails(eventId: string, details: Omit<Partial<NewSpecialEvent>, 'name' | 'dates'>, expectedVersion: number | undefined): Promise<StoredEvent> {
    const fields = fieldAssignments(details);
    const started = Date.now();
    for (let round = 1; ; round++) {
      this.checkTime(COMMIT_RESERVE_MS);
      const writeId = randomUUID().slice(0, 8);
      const startedAt = new Date().toISOString();
      try {
        const { Attributes } = await this.client.send(
          new UpdateCommand({
            TableName: this.tableName,
            Key: keys.event(eventId),
            UpdateExpression: `SET ${[...fields.assignments, 'version = version + :one', 'updatedAt = :now', 'lastWriteId = :writeId'].join(', ')}`,
            ConditionExpression:
              `${expectedVersion === undefined ? 'attribute_exists(version)' : 'version = :expectedVersion'} AND ` +
              '(attribute_not_exists(leaseUntil) OR leaseUntil < :leaseNow) AND (attribute_not_exists(lastWriteId) OR lastWriteId <> :writeId) AND ' +
              '(attribute_not_exists(fencedWrite) OR fencedWrite <> :writeId)',
            ExpressionAttributeNames: fields.names,
            ExpressionAttributeValues: {
              ...fields.values,
              ':one': 1,
              ':now': startedAt,
              ':leaseNow': Date.now(),
              ':writeId': writeId,
              ...(expectedVersion === undefined ? {} : { ':expectedVersion': expectedVersion }),
            },
            ReturnValues: 'ALL_NEW',
            ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
          }),
          { abortSignal: this.commitSignal() },
        );
        return toStoredEvent(Attributes as Record<string, unknown>);
      } catch (error) {
        if (!(error instanceof Error)) throw error;
        if (error.name === 'ConditionalCheckFailedException') {
          const found = toBaseItem(unmarshallItem((error as { Item?: unknown }).Item));
          if (!found) throw new EventNotFoundError(eventId);
          if (found.lastWriteId === writeId) return found;
          this.checkNoLeaseOf(eventId, found);
          throw new EventVersionMismatchError(eventId, found.version);
        }
        // Another writer's transaction holds the item: retry, as a lost race.
        const attempts = (error as { $metadata?: { attempts?: number } }).$metadata?.attempts ?? 1;
        if (error.name === 'TransactionConflictException' && attempts <= 1) {
          if (round >= MAX_WRITE_ATTEMPTS || Date.now() - started > LOST_RACE_BUDGET_MS) throw new ConcurrentModificationError(eventId);
          continue;
        }
        if (DEFINITE_FAILURES.has(error.name) && attempts <= 1) throw error;
        const outcome = await this.fenceDetails(eventId, writeId, startedAt, error);
        if (outcome instanceof Error) throw outcome;
        return outcome;
      }
    }
  }

  /** fence() for the details-only update, which read no version: applied, not applied (then `error`), or unknown. */
  private async fenceDetails(eventId: string, writeId: string, startedAt: string, error: Error): Promise<Error | StoredEvent> {
    const signal = this.fenceSignal();
    if (!signal) return new WriteOutcomeUnknownError(eventId);
    try {
      const { Attributes } = await this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: keys.event(eventId),
          UpdateExpression: 'SET fencedWrite = :writeId',
          ConditionExpression: 'attribute_exists(version) AND (attribute_not_exists(lastWriteId) OR lastWriteId <> :writeId)',
          ExpressionAttributeValues: { ':writeId': writeId },
          ReturnValues: 'ALL_OLD',
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
        { abortSignal: signal },
      );
      // Not applied now, and fenced: never. Unless it applied and another write followed it since.
      return String(Attributes?.updatedAt ?? '') < startedAt ? new StoreBusyError(`The update did not complete (${error.name}); nothing was written`) : new WriteOutcomeUnknownError(eventId);
    } catch (fenceError) {
      if (!(fenceError instanceof Error) || fenceError.name !== 'ConditionalCheckFailedException') return new WriteOutcomeUnknownError(eventId);
      const found = toBaseItem(unmarshallItem((fenceError as { Item?: unknown }).Item));
      return found?.lastWriteId === writeId ? found : found ? new WriteOutcomeUnknownError(eventId) : new EventNotFoundError(eventId);
    }
  }

}
