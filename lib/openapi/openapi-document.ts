// The OpenAPI 3.1 document of the API, built from the code that runs: paths, methods, roles and
// success statuses from the route table, schemas from the valibot schemas the handlers validate
// with, problems from the problem catalogue, gateway answers from the gateway-response table.
// `npm run openapi` writes it to openapi/openapi.json; the local API serves it fresh.
import * as v from 'valibot';
import { ConcurrentModificationError, EventNotFoundError, EventVersionMismatchError, IdempotencyKeyReusedError } from '../../functions/store/events-store.ts';
import {
  CalendarDate,
  CreateEventRequest,
  EventDates,
  EventDescription,
  EventId,
  EventLocation,
  EventName,
  EventPathParameters,
  EventPrice,
  ListEventsQuery,
  SCHEMA_DESCRIPTIONS,
  SpecialEvent,
  UpdateEventRequest,
} from '../../functions/events/event-schema.ts';
import { LIMITS } from '../../functions/events/limits.ts';
import { LAST_DATE } from '../../functions/events/calendar-dates.ts';
import { methodNotAllowedResponse } from '../../functions/http/gateway-responses.ts';
import { idempotencyKey, ifMatch, validate, type HttpEvent } from '../../functions/http/http.ts';
import { IF_MATCH_PATTERN } from '../../functions/http/preconditions.ts';
import { HttpProblem, problemBody, PROBLEM_CONTENT_TYPE, type Problem } from '../../functions/events/problems.ts';
import { API_VERSION, BASE_PATH, resourceMethods, ROLES, routes, type Route } from '../../functions/routes.ts';
import { serviceIndex, serviceIndexHeaders } from './service-index.ts';
import { IF_NONE_MATCH_PARAMETER, notModifiedResponse, READ_HEADERS, READ_SEMANTICS_DESCRIPTION, readSuccessHeaders } from './read-semantics.ts';
import { componentSchemas, schemaWithReferences, SCHEMA_REF_PREFIX, type JsonSchema } from './json-schemas.ts';
import {
  errorExample,
  gatewayExample,
  HEADER_REFS,
  HEADERS,
  methodNotAllowedProblemResponse,
  problemResponse,
  problemSchemas,
  sharedResponses,
  type ProblemExample,
} from './problem-responses.ts';

export type OpenApiDocument = Record<string, unknown> & {
  openapi: string;
  info: { title: string; version: string; description: string };
  servers: { url: string; description: string }[];
  paths: Record<string, Record<string, OpenApiOperation>>;
  components: Record<string, Record<string, unknown>>;
};

export interface OpenApiOperation {
  operationId: string;
  summary: string;
  description: string;
  tags: string[];
  security: Record<string, string[]>[];
  parameters?: unknown[];
  requestBody?: unknown;
  responses: Record<string, unknown>;
  'x-required-role'?: string;
}

export const SECURITY_SCHEME = 'MuseumPlaceholderAuth';
export const LOCAL_SERVER_URL = `http://127.0.0.1:3000${BASE_PATH}`;

/** Placeholder host names (the `.example` TLD is reserved): the deployment's custom domains. */
export const SERVERS = [
  { url: `https://api.museum.example${BASE_PATH}`, description: 'Production' },
  { url: 'https://mock.museum.example', description: 'Mock deployment: the same interface without the version segment' },
  { url: LOCAL_SERVER_URL, description: 'Local API (`npm start`), backed by DynamoDB Local' },
];

const TAG = 'Special events';

/** Schemas shared by name in components.schemas (and referenced from everything else). */
const EVENT_SCHEMAS = {
  EventId,
  EventName,
  EventLocation,
  EventDescription,
  CalendarDate,
  EventDates,
  EventPrice,
  SpecialEvent,
  CreateSpecialEventRequest: CreateEventRequest,
  UpdateSpecialEventRequest: UpdateEventRequest,
} satisfies Record<string, v.GenericSchema>;

const SpecialEventList = v.pipe(
  v.array(SpecialEvent),
  v.maxLength(LIMITS.maxListLimit),
  v.description(`One page of special events, at most \`limit\` of them, ordered by their first date in the range, then name, then id`),
);

// Examples are checked against the very schemas the handlers use when the document is built.
const exampleEvent = v.parse(SpecialEvent, {
  eventId: '6f1e8a57-5d1c-4b8e-9b35-2f7d8e4c1a90',
  name: 'Night at the Museum',
  location: 'Main Hall',
  eventDescription: 'An after-hours tour of the dinosaur galleries, with torches.',
  dates: ['2031-05-01', '2031-05-02'],
  price: 25,
});
const exampleOtherEvent = v.parse(SpecialEvent, {
  eventId: '0c5b2a61-4a3f-4c43-9f0a-6f1f2a3b4c5d',
  name: 'Fossil Friday',
  location: 'Gallery 3',
  eventDescription: 'Meet the palaeontologists and handle real fossils.',
  dates: ['2031-05-02'],
  price: 12.5,
});
const { eventId: _assigned, ...exampleCreateRequest } = exampleEvent;
v.parse(CreateEventRequest, exampleCreateRequest);
const exampleUpdateRequest = v.parse(UpdateEventRequest, { price: 30, dates: ['2031-06-01', '2031-06-02'] });

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

const problems = {
  invalidBody: {
    summary: 'Fields failed validation',
    value: thrownProblem(() =>
      validate(CreateEventRequest, { ...exampleCreateRequest, name: '   ', dates: ['2031-02-30'], price: -5, eventId: exampleEvent.eventId }, 'request body'),
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
    value: thrownProblem(() => ifMatch({ headers: { 'if-match': '3' } } as unknown as HttpEvent)),
  },
  unknownQueryParameter: {
    summary: 'This operation takes no query parameters',
    value: thrownProblem(() => validate(v.strictObject({}), { expand: 'all' }, 'query string')),
  },
  duplicateKey: {
    summary: 'A field is given twice',
    value: problemBody('validation-error', 'The request body is invalid: "price" is given more than once', [{ field: 'price', message: 'is given more than once' }]),
  },
  notUtf8: {
    summary: 'The body is not UTF-8',
    value: problemBody('malformed-json', 'The request body is not valid UTF-8'),
  },
  idempotencyKeyLength: {
    summary: 'Idempotency-Key is empty or too long',
    value: thrownProblem(() => idempotencyKey({ headers: { 'idempotency-key': '' } })),
  },
  notFound: errorExample(new EventNotFoundError(exampleEvent.eventId), 'No event has this id'),
  versionMismatch: errorExample(new EventVersionMismatchError(exampleEvent.eventId, 4), 'If-Match named an older version'),
  concurrentWrites: errorExample(new ConcurrentModificationError(exampleEvent.eventId), 'Other requests kept changing the event'),
  idempotencyKeyReused: errorExample(new IdempotencyKeyReusedError(), 'Same key, different body'),
  bodyTooLarge: {
    summary: 'The body exceeds 64 KiB',
    value: problemBody('payload-too-large', `The request body is 70123 bytes; at most ${LIMITS.maxBodyBytes} are accepted`),
  },
  requestTooLarge: gatewayExample('REQUEST_TOO_LARGE', 'The request exceeds 10 MB'),
  unsupportedMediaType: {
    summary: 'The body is not sent as JSON',
    value: problemBody('unsupported-media-type', 'The request body must be sent as application/json (UTF-8), not "text/plain"'),
  },
  contentCoded: {
    summary: 'The body is compressed',
    value: problemBody('unsupported-media-type', 'The request body must not be content-coded (Content-Encoding "gzip"); send it as it is'),
  },
} satisfies Record<string, ProblemExample>;

/** The statuses one operation answers besides the shared ones, with what they mean for it. */
interface OperationDetails {
  description: string;
  parameters: unknown[];
  requestBody?: unknown;
  success: Record<string, unknown>;
  errors: Record<number, Record<string, unknown>>;
}

const parameterRef = (name: string) => ({ $ref: `#/components/parameters/${name}` });
const schemaRef = (name: string) => ({ $ref: `${SCHEMA_REF_PREFIX}${name}` });
const json = (schema: unknown, examples: Record<string, { summary: string; value: unknown }>) => ({ 'application/json': { schema, examples } });

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
  422: problemResponse(422, 'The `Idempotency-Key` was already used with a different request', { idempotencyKeyReused: problems.idempotencyKeyReused }),
  412: problemResponse(
    412,
    '`If-Match` matches no current version of the event: it names other versions, only weak entity-tags (which never match), or nothing at all (an empty field); read the event again',
    { versionMismatch: problems.versionMismatch },
  ),
});

const gatewayTooLarge = problemResponse(413, "The request exceeds API Gateway's 10 MB payload limit", { requestTooLarge: problems.requestTooLarge });
const bodyTooLarge = problemResponse(413, `The body exceeds ${LIMITS.maxBodyBytes} bytes (64 KiB)`, {
  bodyTooLarge: problems.bodyTooLarge,
  requestTooLarge: problems.requestTooLarge,
});
const unsupportedMediaType = problemResponse(
  415,
  'The body is not sent as `application/json` (or `application/merge-patch+json` for PATCH) in UTF-8, or it has a `Content-Encoding` other than `identity` (then `Accept-Encoding: identity` says so)',
  { unsupportedMediaType: problems.unsupportedMediaType, contentCoded: problems.contentCoded },
  { 'Accept-Encoding': HEADER_REFS.AcceptEncoding },
);
const bodyErrors = {
  invalidBody: problems.invalidBody,
  malformedJson: problems.malformedJson,
  notUtf8: problems.notUtf8,
  duplicateKey: problems.duplicateKey,
};

function operationDetails(): Record<string, OperationDetails> {
  return {
    createSpecialEvent: {
      description:
        'Creates a special event; the service assigns its `eventId`. Send an `Idempotency-Key` to make retries safe: ' +
        `a repeat with the same key and body within ${LIMITS.idempotencyWindowHours} hours returns the event the key created (same body, ` +
        '`Location` and `ETag`) instead of creating another, even when the requests race.',
      parameters: [parameterRef('IdempotencyKey')],
      requestBody: {
        required: true,
        content: json(schemaRef('CreateSpecialEventRequest'), { nightAtTheMuseum: { summary: 'A two-day event', value: exampleCreateRequest } }),
      },
      success: {
        description: 'Created: the event with all six fields, including the assigned `eventId`',
        headers: { Location: HEADER_REFS.Location, ETag: HEADER_REFS.ETag },
        content: json(schemaRef('SpecialEvent'), { created: { summary: 'The created event', value: exampleEvent } }),
      },
      errors: {
        400: problemResponse(400, 'The body is not UTF-8 JSON, repeats a field or fails validation, a query parameter is given, or `Idempotency-Key` is out of bounds', {
          ...bodyErrors,
          idempotencyKeyLength: problems.idempotencyKeyLength,
          unknownQueryParameter: problems.unknownQueryParameter,
        }),
        413: bodyTooLarge,
        415: unsupportedMediaType,
        422: problemResponse(422, 'The `Idempotency-Key` was already used with a different body', { idempotencyKeyReused: problems.idempotencyKeyReused }),
      },
    },
    listSpecialEvents: {
      description:
        'Returns the upcoming special events: those with at least one date in [`startDate`, `endDate`], one page at a time. ' +
        'Unknown or repeated query parameters are rejected.',
      parameters: ['StartDate', 'EndDate', 'Page', 'Limit', 'IfNoneMatch'].map(parameterRef),
      success: {
        description: 'Success: one page of events (an empty array past the last page)',
        headers: readSuccessHeaders('ContentETag', { Link: { $ref: '#/components/headers/Link' } }),
        content: json(schemaRef('SpecialEventList'), { page: { summary: 'A page of two events', value: [exampleEvent, exampleOtherEvent] } }),
      },
      errors: {
        304: notModifiedResponse('ContentETag'),
        400: problemResponse(400, 'A query parameter is invalid, unknown or repeated, or the date range is reversed or too long; or `If-None-Match` is not a list of entity-tags', {
          invalidQuery: problems.invalidQuery,
        }),
        413: gatewayTooLarge,
      },
    },
    getSpecialEvent: {
      description: 'Returns one special event, with its version as the `ETag` header.',
      parameters: [parameterRef('EventId'), parameterRef('IfNoneMatch')],
      success: {
        description: 'Success: the event',
        headers: readSuccessHeaders('ETag'),
        content: json(schemaRef('SpecialEvent'), { event: { summary: 'An event', value: exampleEvent } }),
      },
      errors: {
        304: notModifiedResponse('ETag'),
        400: problemResponse(400, '`eventId` is not a UUID, or a query parameter is given, or `If-None-Match` is not a list of entity-tags', {
          invalidEventId: problems.invalidEventId,
          unknownQueryParameter: problems.unknownQueryParameter,
        }),
        404: problemResponse(404, 'No event has this id', { notFound: problems.notFound }),
        413: gatewayTooLarge,
      },
    },
    updateSpecialEvent: {
      description:
        'Changes the fields sent and keeps the others; returns the whole event. With `If-Match` the update applies only ' +
        'to a version it names (otherwise 412); without it the last writer wins. ' + WRITE_OUTCOMES,
      parameters: [parameterRef('EventId'), parameterRef('IfMatch'), parameterRef('IdempotencyKey')],
      requestBody: {
        required: true,
        content: {
          ...json(schemaRef('UpdateSpecialEventRequest'), { newPriceAndDates: { summary: 'Change the price and the dates', value: exampleUpdateRequest } }),
          'application/merge-patch+json': { schema: schemaRef('UpdateSpecialEventRequest') },
        },
      },
      success: {
        description: 'Success: the whole event after the update',
        headers: { ETag: HEADER_REFS.ETag },
        content: json(schemaRef('SpecialEvent'), { updated: { summary: 'The updated event', value: { ...exampleEvent, ...exampleUpdateRequest } } }),
      },
      errors: {
        400: problemResponse(
          400,
          '`eventId` is not a UUID, the body is not UTF-8 JSON, repeats a field or fails validation, a query parameter is given, or `If-Match` is not `*` or a list of entity-tags',
          {
            ...bodyErrors,
            emptyChange: problems.emptyChange,
            invalidEventId: problems.invalidEventId,
            invalidIfMatch: problems.invalidIfMatch,
            unknownQueryParameter: problems.unknownQueryParameter,
          },
        ),
        ...conditionalWriteErrors('updated'),
        413: bodyTooLarge,
        415: unsupportedMediaType,
      },
    },
    deleteSpecialEvent: {
      description:
        'Removes the event from the collection, which cancels a planned event. With `If-Match` only a version it names is deleted (otherwise 412). ' +
        WRITE_OUTCOMES,
      parameters: [parameterRef('EventId'), parameterRef('IfMatch'), parameterRef('IdempotencyKey')],
      success: { description: 'Success - no content' },
      errors: {
        400: problemResponse(400, '`eventId` is not a UUID, a query parameter is given, or `If-Match` is not `*` or a list of entity-tags', {
          invalidEventId: problems.invalidEventId,
          invalidIfMatch: problems.invalidIfMatch,
          unknownQueryParameter: problems.unknownQueryParameter,
        }),
        ...conditionalWriteErrors('deleted'),
        413: gatewayTooLarge,
      },
    },
  };
}

/** Statuses every operation shares, answered by API Gateway or the shared middleware. */
function sharedResponseRefs(route: Route): Record<number, unknown> {
  const ref = (name: string) => ({ $ref: `#/components/responses/${name}` });
  const everyRoleAllowed = route.role === ROLES[0];
  return {
    401: ref('Unauthorized'),
    ...(everyRoleAllowed ? {} : { 403: ref('Forbidden') }),
    429: ref('TooManyRequests'),
    500: ref('InternalServerError'),
    502: ref('BadGateway'),
    503: ref('ServiceUnavailable'),
    504: ref('GatewayTimeout'),
  };
}

function operation(route: Route, details: OperationDetails): OpenApiOperation {
  const responses: Record<string, unknown> = { [route.successStatus]: details.success, ...details.errors, ...sharedResponseRefs(route) };
  const sorted = Object.fromEntries(Object.entries(responses).sort(([a], [b]) => Number(a) - Number(b)));
  return {
    operationId: route.operationId,
    summary: route.summary,
    description: `${details.description}\n\nRequires the **${route.role}** role${route.role === ROLES[0] ? ' (every user has it)' : ''}.`,
    tags: [TAG],
    security: [{ [SECURITY_SCHEME]: [] }],
    ...(details.parameters.length ? { parameters: details.parameters } : {}),
    ...(details.requestBody ? { requestBody: details.requestBody } : {}),
    responses: sorted,
    'x-required-role': route.role,
  };
}

/** Descriptions and defaults of the list query parameters; typed so a new parameter must be described here. */
const LIST_PARAMETERS: Record<keyof typeof ListEventsQuery.entries, { name: string; description: string; default?: number; example: unknown }> = {
  startDate: {
    name: 'StartDate',
    description: "Start of the date range (inclusive). Defaults to today's date in the museum's time zone.",
    example: '2031-05-01',
  },
  endDate: {
    name: 'EndDate',
    description:
      `End of the date range (inclusive) for which events are retrieved. Defaults to ${LIMITS.defaultRangeDays} days after \`startDate\`, ` +
      `but never later than ${LAST_DATE} (the last supported date); must not be before \`startDate\` nor more than ${LIMITS.maxRangeDays} days after it.`,
    example: '2031-05-08',
  },
  page: { name: 'Page', description: `Page number to retrieve (at most ${LIMITS.maxListPage})`, default: 1, example: 2 },
  limit: {
    name: 'Limit',
    description: `Number of events per page (at most ${LIMITS.maxListLimit})`,
    default: LIMITS.defaultListLimit,
    example: LIMITS.defaultListLimit,
  },
};

function parameters(): Record<string, unknown> {
  const query = Object.fromEntries(
    Object.entries(ListEventsQuery.entries).map(([name, optional]) => {
      const described = LIST_PARAMETERS[name as keyof typeof LIST_PARAMETERS];
      const named = Object.entries(EVENT_SCHEMAS).find(([, schema]) => schema === optional.wrapped)?.[0];
      const schema: JsonSchema = schemaWithReferences(optional.wrapped, EVENT_SCHEMAS, named && SCHEMA_DESCRIPTIONS[named]);
      return [
        described.name,
        {
          name,
          in: 'query',
          required: false,
          description: described.description,
          schema: described.default === undefined ? schema : { ...schema, default: described.default },
          example: described.example,
        },
      ];
    }),
  );
  return {
    EventId: { name: 'eventId', in: 'path', required: true, description: 'Identifier of the event', schema: schemaRef('EventId'), example: exampleEvent.eventId },
    IfMatch: {
      name: 'If-Match',
      in: 'header',
      required: false,
      description:
        'RFC 9110 `If-Match`: `*`, or a comma-separated list of entity-tags (`"3"`, `"3", "4"`; an opaque tag may contain commas). ' +
        'The write applies only if a listed strong tag equals the current `ETag` character for character (`"03"` is not `"3"`); ' +
        'weak tags (`W/"3"`) never match, and an empty field matches nothing: both are a 412. `*` or no header: any current version. ' +
        'Several `If-Match` lines form one list. A value outside this grammar is a 400.',
      schema: { type: 'string', pattern: IF_MATCH_PATTERN },
      example: '"3"',
    },
    IfNoneMatch: IF_NONE_MATCH_PARAMETER,
    IdempotencyKey: {
      name: 'Idempotency-Key',
      in: 'header',
      required: false,
      description: `A unique key per intended write (a UUID, say): a creation, an update or a deletion. Keys are kept per user and operation for ${LIMITS.idempotencyWindowHours} hours.`,
      schema: { type: 'string', minLength: 1, maxLength: LIMITS.idempotencyKeyLength },
      example: '5b0e8c4f-1d7a-4a59-9d0c-3c2f8f6b1e21',
    },
    ...query,
  };
}

const ServiceIndex = v.pipe(
  v.strictObject({
    name: v.string(),
    version: v.literal(API_VERSION),
    links: v.strictObject({
      'service-desc': v.pipe(v.string(), v.description('This document (relative to the request URL)')),
      'service-doc': v.pipe(v.string(), v.description('The rendered documentation')),
      'special-events': v.pipe(v.string(), v.description('The special events collection')),
    }),
  }),
  v.description('The entry point of the API: its name, interface version and links (also sent as RFC 8631 `Link` headers)'),
);

/** `GET /v1.1`: the service index (service-index.ts), served without credentials. */
function serviceIndexOperation(): Record<string, unknown> {
  const body = v.parse(ServiceIndex, serviceIndex());
  return {
    operationId: 'getServiceIndex',
    summary: 'Service index',
    description:
      `The entry point: the base URL itself (\`${BASE_PATH}\`, without a trailing slash, since the links are relative to it). ` +
      'Links to this document and to the rendered documentation, in the body and as RFC 8631 `Link` headers. No credentials needed.',
    tags: [INDEX_TAG],
    security: [],
    responses: {
      200: {
        description: 'The service index',
        headers: {
          Link: {
            description: 'RFC 8631 links: `service-desc` (this OpenAPI document) and `service-doc` (its rendering)',
            required: true,
            schema: { type: 'string', examples: [serviceIndexHeaders().Link] },
          },
          ETag: { $ref: '#/components/headers/ContentETag' },
        },
        content: json(schemaRef('ServiceIndex'), { index: { summary: 'The index', value: body } }),
      },
      304: {
        description: 'Not modified: `If-None-Match` names the current entity tag (or is `*`). No content.',
        headers: { ETag: { $ref: '#/components/headers/ContentETag' } },
      },
      429: { $ref: '#/components/responses/TooManyRequests' },
    },
  };
}
const INDEX_TAG = 'Service';

const API_DESCRIPTION = `Create, list, read, partially update and delete the museum's special events.

**Authentication.** Every operation needs HTTP Basic credentials (\`${SECURITY_SCHEME}\`). Users with the *viewer* role may read; the *editor* role may also create, update and delete.

**Errors** are [RFC 9457](https://www.rfc-editor.org/rfc/rfc9457) problem details (\`${PROBLEM_CONTENT_TYPE}\`) whose \`type\` names the problem; validation failures list every invalid input in \`errors\`. A path the API does not have is a 404 problem; a method a path does not have is a 405 problem with the path's methods in \`Allow\` (see each path's \`x-method-not-allowed\`).

**Requests.** Bodies are JSON objects in UTF-8 without a content coding (\`Content-Encoding\` other than \`identity\` is a 415); bytes that are not UTF-8, U+FFFD anywhere in the body (what a gateway puts in place of such bytes), and a field given twice are 400s. Query parameters an operation does not define, or a parameter given twice, are 400s. Text fields count length in Unicode code points, as JSON Schema does.

${READ_SEMANTICS_DESCRIPTION}

**Versions and retries.** \`GET\`, \`POST\` and \`PATCH\` return the event's version as a strong \`ETag\`; send it in \`If-Match\` to update or delete only that version. \`POST\` accepts an \`Idempotency-Key\` so that a retried create does not create twice.

This document is generated from the service's code; it is served at \`${BASE_PATH}/openapi.json\` and rendered at \`${BASE_PATH}/docs\`.`;

export function buildOpenApiDocument(): OpenApiDocument {
  const details = operationDetails();
  const paths: Record<string, Record<string, OpenApiOperation>> = { '/': { get: serviceIndexOperation() as unknown as OpenApiOperation } };
  // The public documents (the index here; openapi.json and docs are not operations) have GET only.
  const documentMethods = [...resourceMethods(), ['/', ['GET']] as const];
  for (const route of routes) {
    const operationDetail = details[route.operationId];
    if (!operationDetail) throw new Error(`No OpenAPI details for operation ${route.operationId}`);
    (paths[route.path] ??= {})[route.method.toLowerCase()] = operation(route, operationDetail);
  }
  for (const [path, methods] of documentMethods) {
    // OpenAPI describes the methods a path has, not the answer to the others: an extension holds that response.
    const answer = methodNotAllowedResponse(methods);
    const allow = answer.headers.Allow;
    Object.assign((paths[path] ??= {}) as Record<string, unknown>, {
      description: `Any other method is answered 405 with \`Allow: ${allow}\`.`,
      'x-method-not-allowed': methodNotAllowedProblemResponse(
        'This path does not have the method; `Allow` lists those it has',
        { summary: `PUT on ${path}`, value: answer.body },
        allow,
      ),
    });
  }
  for (const operationId of Object.keys(details)) {
    if (!routes.some((route) => route.operationId === operationId)) throw new Error(`OpenAPI details for unknown operation ${operationId}`);
  }
  return {
    openapi: '3.1.1',
    info: {
      title: 'Museum Special Events API',
      version: API_VERSION,
      description: API_DESCRIPTION,
    },
    servers: SERVERS,
    tags: [
      { name: TAG, description: 'Special events hosted by the museum: exhibitions, tours, talks' },
      { name: INDEX_TAG, description: 'Where the API starts: links to its description and documentation' },
    ],
    paths,
    components: {
      schemas: {
        ...componentSchemas({ ...EVENT_SCHEMAS, SpecialEventList, ServiceIndex }, SCHEMA_DESCRIPTIONS),
        ...problemSchemas(),
      },
      parameters: parameters(),
      headers: { ...HEADERS, ...READ_HEADERS },
      responses: sharedResponses(),
      securitySchemes: {
        [SECURITY_SCHEME]: {
          type: 'http',
          scheme: 'basic',
          description: 'HTTP Basic credentials (`username:password`) of a user created with `npm run users`',
        },
      },
    },
  };
}

/** The committed file's exact text. */
export function serializeOpenApiDocument(document: OpenApiDocument): string {
  return `${JSON.stringify(document, null, 2)}\n`;
}
