// The document's examples: events and requests checked against the very schemas the handlers use
// when the document is built, and problems produced by the very functions that reject requests
// (request-validation.ts, request-headers.ts) or mapped from the store's own errors.
import * as v from 'valibot';
import {
  CreateEventRequest,
  EventPathParameters,
  ListEventsQuery,
  SpecialEvent,
  UpdateEventRequest,
} from '../../functions/events/event-schema.ts';
import { LIMITS } from '../../functions/events/limits.ts';
import { HttpProblem, problemBody, type Problem } from '../../functions/events/problems.ts';
import type { HttpEvent } from '../../functions/http/http.ts';
import { parseJsonText } from '../../functions/http/json-text.ts';
import {
  CollectionPreconditionFailedError,
  IfNoneMatchFailedError,
  ReadPreconditionFailedError,
} from '../../functions/http/preconditions.ts';
import { conditionalHeaders, idempotencyKey, requireJsonContentType } from '../../functions/http/request-headers.ts';
import { validate } from '../../functions/http/request-validation.ts';
import {
  ConcurrentModificationError,
  EventNotFoundError,
  EventVersionMismatchError,
  IdempotencyKeyReusedError,
} from '../../functions/store/store-errors.ts';
import { CursorExpiredError, encodeCursor, endOfMoment, InvalidCursorError, toChangeEvent } from '../../functions/changes/change-feed.ts';
import { errorExample, type ProblemExample } from './problem-responses.ts';

export const exampleEvent = v.parse(SpecialEvent, {
  eventId: '6f1e8a57-5d1c-4b8e-9b35-2f7d8e4c1a90',
  name: 'Night at the Museum',
  location: 'Main Hall',
  eventDescription: 'An after-hours tour of the dinosaur galleries, with torches.',
  dates: ['2031-05-01', '2031-05-02'],
  price: 25,
});
export const exampleOtherEvent = v.parse(SpecialEvent, {
  eventId: '0c5b2a61-4a3f-4c43-9f0a-6f1f2a3b4c5d',
  name: 'Fossil Friday',
  location: 'Gallery 3',
  eventDescription: 'Meet the palaeontologists and handle real fossils.',
  dates: ['2031-05-02'],
  price: 12.5,
});
const { eventId: _assigned, ...createRequest } = exampleEvent;
export const exampleCreateRequest = createRequest;
v.parse(CreateEventRequest, exampleCreateRequest);
export const exampleUpdateRequest = v.parse(UpdateEventRequest, { price: 30, dates: ['2031-06-01', '2031-06-02'] });

/** A page of the feed: an event created, then its price changed, then deleted (a cancellation), and nothing more yet. */
export const exampleChangePage = (() => {
  const updated = { ...exampleEvent, price: 30 };
  const at = (seconds: number) => new Date(Date.UTC(2031, 3, 2, 9, 30, seconds));
  const common = { eventId: exampleEvent.eventId };
  return {
    changes: [
      toChangeEvent({
        ...common,
        id: '3f9d2c1e-7a4b-4c8d-9e2f-1a2b3c4d5e6f',
        previous: undefined,
        next: exampleEvent,
        version: 1,
        time: at(0),
      }),
      toChangeEvent({
        ...common,
        id: '8b7a6c5d-4e3f-4a1b-8c9d-0e1f2a3b4c5d',
        previous: exampleEvent,
        next: updated,
        version: 2,
        time: at(12),
      }),
      toChangeEvent({
        ...common,
        id: 'c4d5e6f7-a8b9-4c0d-9e1f-2a3b4c5d6e7f',
        previous: updated,
        next: undefined,
        version: 3,
        time: at(40),
      }),
    ],
    // The walk reached the hold-back boundary (a moment after the last change): caught up.
    next: encodeCursor(endOfMoment(at(58))),
    caughtUp: true,
  };
})();

/** The problem `run` throws, as the handlers would answer it. */
function thrownProblem(run: () => unknown): Problem {
  try {
    run();
  } catch (error) {
    if (error instanceof HttpProblem) return error.problem;
    throw error;
  }
  throw new Error('Expected the example input to be rejected');
}

export const problemExamples = {
  invalidBody: {
    summary: 'Fields failed validation',
    value: thrownProblem(() =>
      validate(
        CreateEventRequest,
        { ...exampleCreateRequest, name: '   ', dates: ['2031-02-30'], price: -5, eventId: exampleEvent.eventId },
        'request body',
      ),
    ),
  },
  emptyChange: {
    summary: 'Nothing to change',
    value: thrownProblem(() => validate(UpdateEventRequest, {}, 'request body')),
  },
  malformedJson: {
    summary: 'The body is not JSON',
    value: problemBody('malformed-json', 'The request body is not valid JSON: Expected double-quoted property name in JSON at position 13'),
  },
  invalidEventId: {
    summary: 'The path does not hold a UUID',
    value: thrownProblem(() => validate(EventPathParameters, { eventId: 'not-a-uuid' }, 'event id')),
  },
  invalidQuery: {
    summary: 'A query parameter is out of bounds',
    value: thrownProblem(() => validate(ListEventsQuery, { limit: '31', colour: 'red' }, 'query string')),
  },
  invalidIfMatch: {
    summary: 'If-Match is neither * nor a list of entity-tags',
    value: thrownProblem(() => conditionalHeaders({ headers: { 'if-match': '3' } } as unknown as HttpEvent)),
  },
  invalidIfNoneMatch: {
    summary: 'If-None-Match is neither * nor a list of entity-tags',
    value: thrownProblem(() => conditionalHeaders({ headers: { 'if-none-match': 'W/3' } } as unknown as HttpEvent)),
  },
  inexactPrice: {
    summary: 'A price with more than 2 decimals, judged on the digits sent',
    value: thrownProblem(() => validate(UpdateEventRequest, parseJsonText('{"price": 10.000000000000000001}'), 'request body')),
  },
  contentTypeTwice: {
    summary: 'Content-Type given twice',
    value: thrownProblem(() =>
      requireJsonContentType({
        headers: { 'content-type': 'text/plain' },
        multiValueHeaders: { 'content-type': ['application/json', 'text/plain'] },
      }),
    ),
  },
  unknownQueryParameter: {
    summary: 'This operation takes no query parameters',
    value: thrownProblem(() => validate(v.strictObject({}), { expand: 'all' }, 'query string')),
  },
  duplicateKey: {
    summary: 'A field is given twice',
    value: problemBody('validation-error', 'The request body is invalid: "price" is given more than once', [
      { field: 'price', message: 'is given more than once' },
    ]),
  },
  notUtf8: {
    summary: 'The body is not UTF-8',
    value: problemBody('malformed-json', 'The request body is not valid UTF-8'),
  },
  idempotencyKeyLength: {
    summary: 'Idempotency-Key is empty or too long',
    value: thrownProblem(() => idempotencyKey({ headers: { 'idempotency-key': '' } })),
  },
  invalidCursor: errorExample(new InvalidCursorError(), 'since is not a cursor of this feed'),
  cursorExpired: errorExample(new CursorExpiredError(), 'The cursor is older than the changes the feed keeps'),
  notFound: errorExample(new EventNotFoundError(exampleEvent.eventId), 'No event has this id'),
  versionMismatch: errorExample(new EventVersionMismatchError(exampleEvent.eventId, 4), 'If-Match named an older version'),
  ifNoneMatchFailed: errorExample(new IfNoneMatchFailedError(), 'If-None-Match named the current version, or was *'),
  readIfMatchFailed: errorExample(new ReadPreconditionFailedError('"4"'), 'If-Match named no current entity-tag'),
  collectionIfMatch: errorExample(new CollectionPreconditionFailedError('If-Match'), 'If-Match named entity-tags'),
  collectionIfNoneMatch: errorExample(new CollectionPreconditionFailedError('If-None-Match'), 'If-None-Match was *'),
  concurrentWrites: errorExample(new ConcurrentModificationError(exampleEvent.eventId), 'Other requests kept changing the event'),
  idempotencyKeyReused: errorExample(new IdempotencyKeyReusedError(), 'Same key, different body'),
  bodyTooLarge: {
    summary: 'The body exceeds 64 KiB',
    value: problemBody('payload-too-large', `The request body is 70123 bytes; at most ${LIMITS.maxBodyBytes} are accepted`),
  },
  unsupportedMediaType: {
    summary: 'The body is not sent as JSON',
    value: problemBody('unsupported-media-type', 'The request body must be sent as application/json (UTF-8), not "text/plain"'),
  },
  contentCoded: {
    summary: 'The body is compressed',
    value: problemBody('unsupported-media-type', 'The request body must not be content-coded (Content-Encoding "gzip"); send it as it is'),
  },
} satisfies Record<string, ProblemExample>;
