// The errors the events store throws; functions/events/problems.ts maps each to its HTTP answer.

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

/**
 * Another write of the same event won, or holds its lease: this write did not commit and will not
 * (answered 409 with Retry-After; a retry is safe).
 */
export class ConcurrentModificationError extends Error {
  override name = 'ConcurrentModificationError';
  readonly eventId: string;
  readonly retryAfterSeconds: number;
  constructor(eventId: string, reason = 'is being changed by other requests; retry the request', retryAfterSeconds = 1) {
    super(`The special event ${eventId} ${reason}`);
    this.eventId = eventId;
    this.retryAfterSeconds = Math.max(1, Math.ceil(retryAfterSeconds));
  }
}

/** The Idempotency-Key was already used, within its lifetime, with a different request. */
export class IdempotencyKeyReusedError extends Error {
  override name = 'IdempotencyKeyReusedError';
  constructor() {
    super('This Idempotency-Key was already used with a different request');
  }
}

/** DynamoDB kept some keys of a batch read unprocessed, or the write ran out of time before its commit: nothing was committed. */
export class StoreBusyError extends Error {
  override name = 'StoreBusyError';
}

/**
 * The commit call failed in a way that does not say whether it applied (a timeout, a lost
 * response), and neither could the store find out in time: the client must read the event, or
 * retry with the same Idempotency-Key (answered 504, never 503).
 */
export class WriteOutcomeUnknownError extends Error {
  override name = 'WriteOutcomeUnknownError';
  constructor(eventId: string) {
    super(`Whether this write of the special event ${eventId} applied is unknown`);
  }
}
