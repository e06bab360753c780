// What every write of the store shares: its time limits (no write starts that could still be in
// flight when the invocation answers), the lease check, and the error shapes DynamoDB answers with.
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import type { BaseItem } from './event-items.ts';
import { ConcurrentModificationError, StoreBusyError } from './store-errors.ts';

/** TransactWriteItems' cap: a write whose base item, record and index changes fit is one transaction. */
export const MAX_TRANSACTION_ACTIONS = 100;
/** How long a large write holds its event: long enough to write 366 months, short enough that a crashed writer blocks little. */
export const LEASE_MS = 5_000;
/** A commit starts only with this much time left before the deadline: its own call, then the fence if its outcome is unclear. */
export const COMMIT_RESERVE_MS = 2_500;
export const FENCE_RESERVE_MS = 1_000;
export const MAX_COMMIT_MS = 6_000;
/** Attempts of a write that keeps losing the version race, and the time they may take, before a 409. */
export const MAX_WRITE_ATTEMPTS = 8;
export const LOST_RACE_BUDGET_MS = 1_000;
/** The fence is one small UpdateItem (or PutItem): if it takes longer, the outcome stays unknown (504). */
export const FENCE_TIMEOUT_MS = 1_500;
/** Index items written or deleted at once (the SDK's HTTP agent keeps 50 sockets). */
export const PARALLEL_WRITES = 25;
/** Errors after which DynamoDB certainly did not apply the request. */
export const DEFINITE_FAILURES = new Set([
  'ValidationException',
  'ThrottlingException',
  'ProvisionedThroughputExceededException',
  'RequestLimitExceeded',
  'ResourceNotFoundException',
  'IdempotentParameterMismatchException',
  'ConditionalCheckFailedException',
  'TransactionConflictException',
  'TransactionCanceledException',
]);

export class StoreWriter {
  protected readonly client: DynamoDBDocumentClient;
  protected readonly tableName: string;
  protected readonly signal: AbortSignal | undefined;
  protected readonly deadline: number;

  /** `deadline` (epoch ms): when `signal` aborts and the invocation answers. */
  constructor(client: DynamoDBDocumentClient, tableName: string, signal: AbortSignal | undefined, deadline: number | undefined) {
    this.client = client;
    this.tableName = tableName;
    this.signal = signal;
    this.deadline = deadline ?? Number.POSITIVE_INFINITY;
  }

  /** No write starts once the answer is decided, or so late that its outcome could not be learned before then. */
  protected checkTime(reserveMs: number): void {
    this.signal?.throwIfAborted();
    if (Date.now() > this.deadline - reserveMs) throw new StoreBusyError('Not enough time left to write');
  }

  /**
   * The commit call's own time limit (not the invocation's signal: an aborted call's outcome is
   * unknown): at most MAX_COMMIT_MS, ending FENCE_RESERVE_MS before the deadline, left for the fence.
   */
  protected commitSignal(): AbortSignal {
    return AbortSignal.timeout(Math.min(MAX_COMMIT_MS, this.deadline - Date.now() - FENCE_RESERVE_MS));
  }

  /** The fence call's time limit: at most FENCE_TIMEOUT_MS, ending 200 ms before the deadline; none when under 200 ms is left. */
  protected fenceSignal(): AbortSignal | undefined {
    const budget = this.deadline - Date.now() - 200;
    return budget < 200 ? undefined : AbortSignal.timeout(Math.min(budget, FENCE_TIMEOUT_MS));
  }

  protected checkNoLeaseOf(eventId: string, current: BaseItem): void {
    const left = (current.leaseUntil ?? 0) - Date.now();
    if (left > 0) throw new ConcurrentModificationError(eventId, 'is being changed by a large write; retry the request', left / 1000);
  }
}

/** An item in DynamoDB's own format, as errors carry it (the Document client leaves errors alone). */
export function unmarshallItem(item: unknown): Record<string, unknown> | undefined {
  return item ? unmarshall(item as Record<string, AttributeValue>) : undefined;
}
