// The two retries around an event's write (events-store.ts): a write that lost the version race
// is tried again against the new state, within bounds; a write under an Idempotency-Key that wrote
// nothing answers from the key's record when there is one. Protocol: functions/store/README.md.
import { setTimeout as sleep } from 'node:timers/promises';
import { KeyTakenError, LostRaceError } from './event-commit.ts';
import type { Item } from './event-items.ts';
import { liveRecord, type IdempotencyRequest } from './idempotency-records.ts';
import {
  ConcurrentModificationError,
  EventNotFoundError,
  EventVersionMismatchError,
  IdempotencyKeyReusedError,
  StoreBusyError,
} from './store-errors.ts';
import type { TableStore } from './table-store.ts';

// A write that keeps losing the version race tries MAX_WRITE_ATTEMPTS times within
// LOST_RACE_BUDGET_MS, then answers 409.
export const MAX_WRITE_ATTEMPTS = 8,
  LOST_RACE_BUDGET_MS = 1_000;

/**
 * The one bounded retry of every writer: `attempt` again after a lost race, with jitter, at most
 * MAX_WRITE_ATTEMPTS times within LOST_RACE_BUDGET_MS; then a 409 with Retry-After.
 */
export async function retryingLostRaces<T>(eventId: string, signal: AbortSignal | undefined, attempt: () => Promise<T>): Promise<T> {
  const started = Date.now();
  for (let round = 1; ; round++) {
    try {
      return await attempt();
    } catch (error) {
      if (!(error instanceof LostRaceError)) throw error;
      if (round >= MAX_WRITE_ATTEMPTS || Date.now() - started > LOST_RACE_BUDGET_MS)
        throw new ConcurrentModificationError(eventId, 'was changed by other requests at the same time; retry the request');
      await sleep(Math.random() * 10 * round, undefined, { signal });
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
export async function answeringFromRecord<T>(
  store: Pick<TableStore, 'client' | 'signal'>,
  request: IdempotencyRequest | undefined,
  answer: (record: Item) => T,
  write: () => Promise<T>,
): Promise<T> {
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
      (await liveRecord(store.client, request, store.signal).catch((readError: unknown) => {
        if (refused && !(readError instanceof IdempotencyKeyReusedError)) throw refusal;
        throw readError;
      }));
    if (record) return answer(record);
    throw refusal;
  }
}
