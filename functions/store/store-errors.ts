// The errors the events store throws. Each carries its HTTP answer (kind, detail, headers), fixed
// per class: functions/events/problems.ts maps them with one `instanceof HttpProblem`.
import { HttpProblem, retryAfter, STORE_UNAVAILABLE_DETAIL } from '../events/problems.ts';

export class EventNotFoundError extends HttpProblem {
  override name = 'EventNotFoundError';
  constructor(eventId: string) {
    super('not-found', `No special event has the id ${eventId}`);
  }
}

export class EventVersionMismatchError extends HttpProblem {
  override name = 'EventVersionMismatchError';
  constructor(eventId: string, currentVersion: number) {
    super('precondition-failed', `The special event ${eventId} has changed: its current version is ${currentVersion}`);
  }
}

/** Other writes of the same event kept winning: this write did not commit and will not (409 with Retry-After; a retry is safe). */
export class ConcurrentModificationError extends HttpProblem {
  override name = 'ConcurrentModificationError';
  constructor(eventId: string, reason = 'is being changed by other requests; retry the request') {
    super('conflict', `The special event ${eventId} ${reason}`, { headers: retryAfter(1) });
  }
}

/** The Idempotency-Key was already used, within its lifetime, with a different request. */
export class IdempotencyKeyReusedError extends HttpProblem {
  override name = 'IdempotencyKeyReusedError';
  constructor() {
    super('idempotency-key-reused', 'This Idempotency-Key was already used with a different request');
  }
}

/** Nothing was committed (a batch read left keys unprocessed, no time to write, DynamoDB unreachable): 503 with Retry-After; the message, for the logs, says which. */
export class StoreBusyError extends HttpProblem {
  override name = 'StoreBusyError';
  constructor(message = '') {
    super('service-unavailable', message, { detail: STORE_UNAVAILABLE_DETAIL, headers: retryAfter() });
  }
}

/**
 * The commit failed in a way that does not say whether it applied (a timeout, a lost response), and
 * neither could the fence find out in time: 504, never 503 (the write may have applied).
 */
export class WriteOutcomeUnknownError extends HttpProblem {
  override name = 'WriteOutcomeUnknownError';
  constructor(eventId: string, cause = '') {
    const message = `Whether this write of the special event ${eventId} applied is unknown`;
    super('gateway-timeout', cause ? `${message} (${cause})` : message, {
      detail: `${message}: read the event, or retry with the same Idempotency-Key`,
    });
  }
}

/** The event's dates fall in more months than one write may index (LIMITS.maxEventMonths): a 400 that says how to split. */
export class TooManyMonthsError extends HttpProblem {
  override name = 'TooManyMonthsError';
  constructor(message: string) {
    super('validation-error', `The request body is invalid: dates ${message}`, { errors: [{ field: 'dates', message }] });
  }
}

/** The event is at the highest version a write may store (MAX_VERSION): it can be deleted, not changed. */
export class VersionLimitError extends HttpProblem {
  override name = 'VersionLimitError';
  constructor(eventId: string, version: number) {
    super(
      'conflict',
      `The special event ${eventId} is at version ${version}, the highest a version may reach: it can no longer be changed; delete it and create it again`,
    );
  }
}

/** Errors of a connection that was never made: the request cannot have reached DynamoDB. */
const NEVER_CONNECTED_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH']);

export function isNeverConnected(error: unknown): boolean {
  return Error.isError(error) && NEVER_CONNECTED_CODES.has((error as { code?: string }).code ?? '');
}

/**
 * Whether a failed call certainly never reached DynamoDB: every attempt failed to connect. The
 * client's attempt recorder (dynamodb-client.ts) says so in `$neverSent`; without it (a client
 * built elsewhere), only a single attempt that failed to connect is certain.
 */
export function neverReachedDynamoDb(error: unknown): boolean {
  if (!Error.isError(error)) return false;
  const marked = (error as { $neverSent?: boolean }).$neverSent;
  if (marked !== undefined) return marked;
  return isNeverConnected(error) && ((error as { $metadata?: { attempts?: number } }).$metadata?.attempts ?? 1) <= 1;
}
