// The one error mapping (toProblem): each store error answers with the problem its class carries,
// a foreign temporary failure with a 503, anything else with a 500 that says nothing internal.
import { describe, expect, test } from '@jest/globals';
import { HttpProblem, PROBLEM_TYPE_BASE, toProblem } from '../../functions/events/problems.ts';
import {
  ConcurrentModificationError,
  EventNotFoundError,
  EventVersionMismatchError,
  IdempotencyKeyReusedError,
  StoreBusyError,
  WriteOutcomeUnknownError,
} from '../../functions/store/store-errors.ts';

const id = '0c5b2a61-4a3f-4c43-9f0a-6f1f2a3b4c5d';
const UNAVAILABLE = 'The event store is temporarily unavailable; retry shortly';

/** An error as the AWS SDK, Node or middy throw it: known by its name and fields only. */
function foreign(name: string, fields: Record<string, unknown> = {}): Error {
  return Object.assign(new Error(name), { name }, fields);
}

describe('toProblem', () => {
  test.each<[string, Error, number, string, string, Record<string, string>]>([
    ['EventNotFoundError', new EventNotFoundError(id), 404, 'not-found', `No special event has the id ${id}`, {}],
    [
      'EventVersionMismatchError',
      new EventVersionMismatchError(id, 4),
      412,
      'precondition-failed',
      `The special event ${id} has changed: its current version is 4`,
      {},
    ],
    [
      'ConcurrentModificationError',
      new ConcurrentModificationError(id),
      409,
      'conflict',
      `The special event ${id} is being changed by other requests; retry the request`,
      { 'Retry-After': '1' },
    ],
    [
      'IdempotencyKeyReusedError',
      new IdempotencyKeyReusedError(),
      422,
      'idempotency-key-reused',
      'This Idempotency-Key was already used with a different request',
      {},
    ],
    [
      'StoreBusyError',
      new StoreBusyError('DynamoDB left part of a batch read unprocessed'),
      503,
      'service-unavailable',
      UNAVAILABLE,
      { 'Retry-After': '1' },
    ],
    [
      'WriteOutcomeUnknownError',
      new WriteOutcomeUnknownError(id),
      504,
      'gateway-timeout',
      `Whether this write of the special event ${id} applied is unknown: read the event, or retry with the same Idempotency-Key`,
      {},
    ],
  ])('%s carries its problem', (_name, error, status, kind, detail, headers) => {
    expect(error).toBeInstanceOf(HttpProblem);
    expect(toProblem(error)).toEqual({
      problem: { type: `${PROBLEM_TYPE_BASE}${kind}`, title: expect.any(String), status, detail },
      headers,
      expected: true,
    });
  });

  test('a store error keeps its name and message for the logs', () => {
    const error = new StoreBusyError('Not enough time left to write');
    expect([error.name, error.message]).toEqual(['StoreBusyError', 'Not enough time left to write']);
    expect(new WriteOutcomeUnknownError(id).message).toBe(`Whether this write of the special event ${id} applied is unknown`);
  });

  test.each([
    foreign('ProvisionedThroughputExceededException'),
    foreign('ThrottlingException'),
    foreign('TimeoutError'),
    foreign('Error', { code: 'ECONNRESET' }),
    foreign('InternalFailure', { $metadata: { httpStatusCode: 500 } }),
    foreign('TransactionCanceledException', { CancellationReasons: [{ Code: 'None' }, { Code: 'ThrottlingError' }] }),
  ])('a foreign temporary failure (%p) is a 503 with Retry-After', (error) => {
    expect(toProblem(error)).toEqual({
      problem: expect.objectContaining({ status: 503, detail: UNAVAILABLE }),
      headers: { 'Retry-After': '1' },
      expected: true,
    });
  });

  test.each<unknown>([
    new Error('boom'),
    foreign('TransactionCanceledException', { CancellationReasons: [{ Code: 'ConditionalCheckFailed' }] }),
    foreign('ValidationException', { $metadata: { httpStatusCode: 400 } }),
    'not an error',
    undefined,
  ])('anything else (%p) is a 500 that says nothing internal', (error) => {
    expect(toProblem(error)).toEqual({
      problem: expect.objectContaining({ status: 500, detail: 'An unexpected error occurred; it has been logged' }),
      headers: {},
      expected: false,
    });
  });
});
