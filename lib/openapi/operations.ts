// What the document says about each operation of the route table, beside what the route table
// itself holds (functions/routes.ts: method, path, role, success status, grants): its description,
// parameters, request body, success response with its example, the errors it answers, and the
// headers the mock deployment sends with that example.
//
// One entry per operation, keyed by the route table's operationIds (a route without an entry, or an
// entry without a route, does not compile). Kept here rather than in the route table's rows: every
// Lambda bundle includes functions/routes.ts, and this text, these examples and the response
// builders they need (examples are computed at load, so minification cannot drop them) measured
// +16.8 KB on the create bundle and +32.6 KB on the authorizer's (esbuild, minified), past
// BUNDLE_BUDGET_BYTES in scripts/build.ts, for nothing the functions use; routes.ts would also
// import lib/openapi, which imports routes.ts (a cycle). The mock deployment
// (lib/cdk/museum-mock-api-stack.ts) answers each operation with the success example here, so the
// mock and the document cannot disagree.
import { LIMITS } from '../../functions/events/limits.ts';
import type { OperationId, Route } from '../../functions/routes.ts';
import { json, parameterRef, schemaRef } from './document-schemas.ts';
import { CHANGE_FEED } from '../../functions/changes/change-feed.ts';
import {
  exampleChangePage,
  exampleCreateRequest,
  exampleEvent,
  exampleOtherEvent,
  exampleUpdateRequest,
  problemExamples as problems,
} from './examples.ts';
import { HEADER_REFS, problemResponse } from './problem-responses.ts';
import { notModifiedResponse, readSuccessHeaders } from './read-semantics.ts';
import { bodyTooLarge, gatewayTooLarge, unsupportedMediaType } from './request-body-responses.ts';
import { WEBHOOK_OPERATIONS } from './webhook-operations.ts';
import { negotiatedContent, notAcceptableResponse } from './json-ld-document.ts';
import { CALENDAR_OPERATIONS } from './calendar-operations.ts';

/** A named example value, as OpenAPI's `examples` holds it. */
export interface NamedExample {
  name: string;
  summary: string;
  value: unknown;
}

/** The parts of one operation's document the route table does not hold. */
export interface OperationDetails {
  description: string;
  parameters: unknown[];
  requestBody?: unknown;
  success: {
    description: string;
    headers?: Record<string, unknown>;
    /** The success body: a components.schemas name and its example, which is also the mock's answer. */
    body?: { schema: string; example: NamedExample };
    /** Also offered as schema.org JSON-LD, chosen by Accept (lib/openapi/json-ld-document.ts). */
    negotiated?: 'list' | 'get';
    /** A success body that is not JSON (the calendar feed's iCalendar), as the document's `content`. */
    content?: Record<string, unknown>;
  };
  /** The statuses the operation answers besides its success and the shared ones, with what they mean for it. */
  errors: Record<number, Record<string, unknown>>;
  /** Headers the mock deployment sends with the success example. */
  mockHeaders: Record<string, string>;
}

/** What a client can know of a PATCH or DELETE it sent (README "Write outcomes"). */
const WRITE_OUTCOMES =
  `Send an \`Idempotency-Key\` to make retries safe: a repeat with the same key and request within ${LIMITS.idempotencyWindowHours} hours ` +
  'gets the first answer again instead of writing again. A 409 or 503 means nothing was written and nothing will be; a 504 means the ' +
  'outcome is unknown: read the event, or retry with the same key.';

const conditionalWriteErrors = (verb: string) => ({
  404: problemResponse(404, 'No event has this id', { notFound: problems.notFound }),
  409: problemResponse(
    409,
    `Other requests changed the event while it was being ${verb}, or a large write holds it: nothing was written; retry after \`Retry-After\` seconds`,
    { concurrentWrites: problems.concurrentWrites },
    { 'Retry-After': HEADER_REFS.RetryAfter },
  ),
  422: problemResponse(422, 'The `Idempotency-Key` was already used with a different request', {
    idempotencyKeyReused: problems.idempotencyKeyReused,
  }),
  412: problemResponse(
    412,
    'A precondition failed, nothing was written (RFC 9110 §13.2.2: `If-Match` first, then `If-None-Match`): `If-Match` matches no current version of the event ' +
      '(it names other versions, only weak entity-tags, which never match, or nothing at all: an empty field), or `If-None-Match` is `*` (the event exists) ' +
      'or names the current version, weakly or not; read the event again',
    { versionMismatch: problems.versionMismatch, ifNoneMatchFailed: problems.ifNoneMatchFailed },
  ),
});

/** The 412 of GET and HEAD: `If-Match` names no current entity-tag (it is evaluated before `If-None-Match`). */
const readPreconditionFailed = (validator: 'ETag' | 'ContentETag' | 'EventRepresentationETag') =>
  problemResponse(
    412,
    '`If-Match` names no current entity-tag of the answer (weak tags never match; `*` always does): the `ETag` header gives the current one. Evaluated before `If-None-Match` (RFC 9110 §13.2.2)',
    { readIfMatchFailed: problems.readIfMatchFailed },
    { ETag: { $ref: `#/components/headers/${validator}` } },
  );

/** The headers of a negotiated read's 200 and 304: Vary names Accept; the event's ETag depends on the representation. */
function negotiatedReadHeaders(etag: 'EventRepresentationETag' | 'ContentETag', extra: Record<string, unknown> = {}) {
  return {
    ...readSuccessHeaders('ETag', extra),
    ETag: { $ref: `#/components/headers/${etag}` },
    Vary: { $ref: '#/components/headers/NegotiatedVary' },
  };
}

const NEGOTIATION =
  ' With `Accept: application/ld+json` the answer is schema.org JSON-LD (docs/API.md, "JSON-LD"); without `Accept`, or with `*/*`, it is JSON.';

/** What a 400 says of the precondition headers, on every operation. */
const INVALID_PRECONDITION = '`If-Match` or `If-None-Match` is not `*` or a list of entity-tags';
const preconditionErrors = { invalidIfMatch: problems.invalidIfMatch, invalidIfNoneMatch: problems.invalidIfNoneMatch };

const bodyErrors = {
  invalidBody: problems.invalidBody,
  inexactPrice: problems.inexactPrice,
  contentTypeTwice: problems.contentTypeTwice,
  malformedJson: problems.malformedJson,
  notUtf8: problems.notUtf8,
  duplicateKey: problems.duplicateKey,
};

export const OPERATIONS = {
  createSpecialEvent: {
    description:
      'Creates a special event; the service assigns its `eventId`. Send an `Idempotency-Key` to make retries safe: ' +
      `a repeat with the same key and body within ${LIMITS.idempotencyWindowHours} hours returns the event the key created (same body, ` +
      '`Location` and `ETag`) instead of creating another, even when the requests race. The target of a POST is the collection, which ' +
      'always exists: `If-Match: *` holds, `If-None-Match: *` fails (412), and a list of entity-tags in `If-Match` is a 412 (the collection ' +
      'has no entity-tag a write can be conditioned on); a list in `If-None-Match` holds.',
    parameters: [parameterRef('IfMatch'), parameterRef('IfNoneMatch'), parameterRef('IdempotencyKey')],
    requestBody: {
      required: true,
      content: json(schemaRef('CreateSpecialEventRequest'), {
        nightAtTheMuseum: { summary: 'A two-day event', value: exampleCreateRequest },
      }),
    },
    success: {
      description: 'Created: the event with all six fields, including the assigned `eventId`',
      headers: { Location: HEADER_REFS.Location, ETag: HEADER_REFS.ETag },
      body: { schema: 'SpecialEvent', example: { name: 'created', summary: 'The created event', value: exampleEvent } },
    },
    errors: {
      400: problemResponse(
        400,
        `The body is not UTF-8 JSON, repeats a field or fails validation, a query parameter is given, \`Idempotency-Key\` is out of bounds, or ${INVALID_PRECONDITION}`,
        {
          ...bodyErrors,
          idempotencyKeyLength: problems.idempotencyKeyLength,
          unknownQueryParameter: problems.unknownQueryParameter,
          ...preconditionErrors,
        },
      ),
      412: problemResponse(412, '`If-None-Match` is `*` (the collection exists) or `If-Match` lists entity-tags: nothing was created', {
        collectionIfNoneMatch: problems.collectionIfNoneMatch,
        collectionIfMatch: problems.collectionIfMatch,
      }),
      413: bodyTooLarge,
      415: unsupportedMediaType,
      422: problemResponse(422, 'The `Idempotency-Key` was already used with a different body', {
        idempotencyKeyReused: problems.idempotencyKeyReused,
      }),
    },
    // Location is relative: against /<stage>/special-events it resolves to /<stage>/special-events/<id>.
    mockHeaders: { Location: `special-events/${exampleEvent.eventId}`, ETag: '"1"' },
  },
  listSpecialEvents: {
    description:
      'Returns the upcoming special events: those with at least one date in [`startDate`, `endDate`], one page at a time. ' +
      'Unknown or repeated query parameters are rejected.' +
      NEGOTIATION,
    parameters: ['StartDate', 'EndDate', 'Page', 'Limit', 'IfMatch', 'IfNoneMatch'].map(parameterRef),
    success: {
      description: 'Success: one page of events (an empty array, or an empty `ItemList`, past the last page)',
      headers: negotiatedReadHeaders('ContentETag', { Link: { $ref: '#/components/headers/Link' } }),
      body: {
        schema: 'SpecialEventList',
        example: { name: 'page', summary: 'A page of two events', value: [exampleEvent, exampleOtherEvent] },
      },
      negotiated: 'list',
    },
    errors: {
      304: { ...notModifiedResponse('ContentETag'), headers: negotiatedReadHeaders('ContentETag') },
      406: notAcceptableResponse(),
      400: problemResponse(
        400,
        `A query parameter is invalid, unknown or repeated, or the date range is reversed or too long; or ${INVALID_PRECONDITION}`,
        {
          invalidQuery: problems.invalidQuery,
          ...preconditionErrors,
        },
      ),
      412: readPreconditionFailed('ContentETag'),
      413: gatewayTooLarge,
    },
    mockHeaders: {},
  },
  getSpecialEvent: {
    description: 'Returns one special event, with its version as the `ETag` header.' + NEGOTIATION,
    parameters: [parameterRef('EventId'), parameterRef('IfMatch'), parameterRef('IfNoneMatch')],
    success: {
      description: 'Success: the event',
      headers: negotiatedReadHeaders('EventRepresentationETag'),
      body: { schema: 'SpecialEvent', example: { name: 'event', summary: 'An event', value: exampleEvent } },
      negotiated: 'get',
    },
    errors: {
      304: { ...notModifiedResponse('ETag'), headers: negotiatedReadHeaders('EventRepresentationETag') },
      406: notAcceptableResponse(),
      400: problemResponse(400, `\`eventId\` is not a UUID, or a query parameter is given, or ${INVALID_PRECONDITION}`, {
        invalidEventId: problems.invalidEventId,
        unknownQueryParameter: problems.unknownQueryParameter,
        ...preconditionErrors,
      }),
      404: problemResponse(404, 'No event has this id', { notFound: problems.notFound }),
      412: readPreconditionFailed('EventRepresentationETag'),
      413: gatewayTooLarge,
    },
    mockHeaders: { ETag: '"1"' },
  },
  updateSpecialEvent: {
    description:
      'Changes the fields sent and keeps the others; returns the whole event. With `If-Match` the update applies only ' +
      'to a version it names (otherwise 412); without it the last writer wins. `If-None-Match` makes it apply only while the current version is ' +
      'not one it names (`*`: never, the event exists; otherwise 412). ' +
      WRITE_OUTCOMES,
    parameters: [parameterRef('EventId'), parameterRef('IfMatch'), parameterRef('IfNoneMatch'), parameterRef('IdempotencyKey')],
    requestBody: {
      required: true,
      content: {
        ...json(schemaRef('UpdateSpecialEventRequest'), {
          newPriceAndDates: { summary: 'Change the price and the dates', value: exampleUpdateRequest },
        }),
        'application/merge-patch+json': { schema: schemaRef('UpdateSpecialEventRequest') },
      },
    },
    success: {
      description: 'Success: the whole event after the update',
      headers: { ETag: HEADER_REFS.ETag },
      body: {
        schema: 'SpecialEvent',
        example: { name: 'updated', summary: 'The updated event', value: { ...exampleEvent, ...exampleUpdateRequest } },
      },
    },
    errors: {
      400: problemResponse(
        400,
        `\`eventId\` is not a UUID, the body is not UTF-8 JSON, repeats a field or fails validation, a query parameter is given, or ${INVALID_PRECONDITION}`,
        {
          ...bodyErrors,
          emptyChange: problems.emptyChange,
          invalidEventId: problems.invalidEventId,
          unknownQueryParameter: problems.unknownQueryParameter,
          ...preconditionErrors,
        },
      ),
      ...conditionalWriteErrors('updated'),
      413: bodyTooLarge,
      415: unsupportedMediaType,
    },
    mockHeaders: { ETag: '"2"' },
  },
  deleteSpecialEvent: {
    description:
      'Removes the event from the collection, which cancels a planned event. With `If-Match` only a version it names is deleted, with ' +
      '`If-None-Match` only a version it does not name (`*`: never); otherwise 412. ' +
      WRITE_OUTCOMES,
    parameters: [parameterRef('EventId'), parameterRef('IfMatch'), parameterRef('IfNoneMatch'), parameterRef('IdempotencyKey')],
    success: { description: 'Success - no content' },
    errors: {
      400: problemResponse(400, `\`eventId\` is not a UUID, a query parameter is given, or ${INVALID_PRECONDITION}`, {
        invalidEventId: problems.invalidEventId,
        unknownQueryParameter: problems.unknownQueryParameter,
        ...preconditionErrors,
      }),
      ...conditionalWriteErrors('deleted'),
      413: gatewayTooLarge,
    },
    mockHeaders: {},
  },
  listSpecialEventChanges: {
    description:
      'The change feed: every creation, update and deletion (cancellation) of a special event, in commit order, as CloudEvents 1.0 ' +
      '(the same objects a webhook delivers). A walk from any cursor yields every later change exactly once. The newest ' +
      `${CHANGE_FEED.holdBackMs / 1000} seconds are held back (a write may still be committing), so a change can be read at most that long after ` +
      `its commit; changes are kept ${CHANGE_FEED.retentionDays} days. To sync: follow \`next\` (also in \`Link\`) until a page says \`caughtUp: true\`; ` +
      'then keep that `next` and ask again from it later. A page may hold fewer than `limit` changes, even none (its time ran out), and says so. To start, take `since=now`, list the windows you care about, then walk from that cursor, applying a ' +
      "change only if its `data.version` is newer than the version you hold. A 410 means the cursor is older than the feed's retention: start again.",
    parameters: ['Since', 'ChangesLimit', 'IfMatch', 'IfNoneMatch'].map(parameterRef),
    success: {
      description: 'Success: one page of changes and the cursor of what follows',
      headers: readSuccessHeaders('ContentETag', { Link: { $ref: '#/components/headers/Link' } }),
      body: {
        schema: 'ChangeFeedPage',
        example: { name: 'changes', summary: 'An event created, changed and cancelled', value: exampleChangePage },
      },
    },
    errors: {
      304: notModifiedResponse('ContentETag'),
      400: problemResponse(
        400,
        `\`since\` is not \`now\` or a cursor of this feed, a query parameter is invalid, unknown or repeated, or ${INVALID_PRECONDITION}`,
        {
          invalidCursor: problems.invalidCursor,
          invalidQuery: problems.invalidQuery,
          ...preconditionErrors,
        },
      ),
      410: problemResponse(
        410,
        `The cursor is older than the ${CHANGE_FEED.retentionDays} days of changes the feed keeps: take \`since=now\`, list again, walk from there`,
        {
          cursorExpired: problems.cursorExpired,
        },
      ),
      412: readPreconditionFailed('ContentETag'),
      413: gatewayTooLarge,
    },
    mockHeaders: { Link: `<?since=${exampleChangePage.next}&limit=${LIMITS.defaultChangesLimit}>; rel="next"` },
  },
  ...WEBHOOK_OPERATIONS,
  ...CALENDAR_OPERATIONS,
} satisfies Record<OperationId, OperationDetails>;

/** The details of a route of the route table. */
export function operationDetails(route: Route<OperationId>): OperationDetails {
  return OPERATIONS[route.operationId];
}

/** The success response of an operation, as the document states it. */
export function successResponse({ success }: OperationDetails): Record<string, unknown> {
  const { body, negotiated, ...response } = success;
  if (!body) return response;
  const content = json(schemaRef(body.schema), { [body.example.name]: { summary: body.example.summary, value: body.example.value } });
  return { ...response, content: negotiated ? negotiatedContent(content, negotiated) : content };
}
