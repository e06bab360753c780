// The error side of the contract: one problem+json schema per HTTP status, generated from the
// problem catalogue, and the responses API Gateway itself sends (gateway-responses.ts). Examples
// are produced by the same code that answers at run time wherever it can be called offline.
import { STATUS_CODES } from 'node:http';
import * as v from 'valibot';
import {
  gatewayResponse,
  PAYLOAD_LIMIT_ANSWER,
  REQUEST_TOO_LARGE_DEFAULT,
  WWW_AUTHENTICATE,
  type GatewayResponseType,
} from '../../functions/http/gateway-responses.ts';
import {
  FRONT_END_KINDS,
  PROBLEM_CONTENT_TYPE,
  PROBLEM_KINDS,
  PROBLEM_TYPE_BASE,
  RETRY_AFTER_SECONDS,
  toProblem,
  type Problem,
  type ProblemKind,
} from '../../functions/events/problems.ts';
import { componentSchemas, SCHEMA_REF_PREFIX, schemaWithReferences, type JsonSchema } from './json-schemas.ts';

/** `Bad Request` -> `BadRequest`: the component names for a status come from Node's reason phrases. */
export function statusName(status: number): string {
  const phrase = STATUS_CODES[status];
  if (!phrase) throw new Error(`No reason phrase for HTTP status ${status}`);
  return phrase.replace(/[^A-Za-z]/g, '');
}

export function problemSchemaName(status: number): string {
  return `${statusName(status)}Problem`;
}

/** The catalogue's kinds that the API answers (not the front end's, FRONT_END_KINDS: the document describes the API). */
const API_KINDS = (Object.keys(PROBLEM_KINDS) as ProblemKind[]).filter((kind) => !FRONT_END_KINDS.includes(kind));

function kindsWithStatus(status: number): ProblemKind[] {
  return API_KINDS.filter((kind) => PROBLEM_KINDS[kind].status === status);
}

export const PROBLEM_STATUSES: readonly number[] = [...new Set(API_KINDS.map((kind) => PROBLEM_KINDS[kind].status))].sort((a, b) => a - b);

const FieldError = v.pipe(
  v.strictObject({
    field: v.pipe(
      v.string(),
      v.description(
        'Dotted path of the invalid field, query parameter or header (`dates.2`, `limit`, `If-Match`); empty for the whole body',
      ),
    ),
    message: v.pipe(v.string(), v.description('What is wrong with it')),
  }),
  v.description('One invalid input'),
);

function problemSchema(status: number) {
  const kinds = kindsWithStatus(status);
  return v.pipe(
    v.strictObject({
      type: v.pipe(
        v.picklist(kinds.map((kind) => `${PROBLEM_TYPE_BASE}${kind}`)),
        v.url(),
        v.description('URI that identifies the problem type'),
      ),
      title: v.pipe(v.picklist(kinds.map((kind) => PROBLEM_KINDS[kind].title)), v.description('Short summary of the problem type')),
      status: v.pipe(v.literal(status), v.description('The HTTP status code')),
      detail: v.pipe(v.string(), v.description('What went wrong with this request, for a human reader')),
      errors: v.optional(v.pipe(v.array(FieldError), v.description('Every invalid input, when the request failed validation'))),
    }),
    v.description(`RFC 9457 problem details for ${status} ${STATUS_CODES[status]}: ${kinds.join(', ')}`),
  );
}

/** components.schemas for FieldError and one `<Status>Problem` schema per status in the catalogue. */
export function problemSchemas(): Record<string, JsonSchema> {
  const definitions: Record<string, v.GenericSchema> = { FieldError };
  for (const status of PROBLEM_STATUSES) if (status !== 405) definitions[problemSchemaName(status)] = problemSchema(status);
  return componentSchemas(definitions);
}

/**
 * The 405 response of a path, for its `x-method-not-allowed` extension. Its schema is inline: no
 * operation answers 405 (it is the answer to the methods a path does not have), so a component
 * would count as unused.
 */
export function methodNotAllowedProblemResponse(description: string, example: ProblemExample, allow: string): Record<string, unknown> {
  return {
    description,
    headers: {
      Allow: { description: 'The methods the path has (RFC 9110 §10.2.1)', required: true, schema: { type: 'string', const: allow } },
    },
    content: {
      [PROBLEM_CONTENT_TYPE]: { schema: schemaWithReferences(problemSchema(405), { FieldError }), examples: { methodNotAllowed: example } },
    },
  };
}

export interface ProblemExample {
  summary: string;
  value: Problem;
}

/** A response object for a problem status, with its examples and headers. */
export function problemResponse(
  status: number,
  description: string,
  examples: Record<string, ProblemExample>,
  headers: Record<string, unknown> = {},
): Record<string, unknown> {
  for (const [name, example] of Object.entries(examples)) {
    if (example.value.status !== status) throw new Error(`Example ${name} has status ${example.value.status}, not ${status}`);
  }
  return {
    description,
    ...(Object.keys(headers).length ? { headers } : {}),
    content: {
      [PROBLEM_CONTENT_TYPE]: {
        schema: { $ref: `${SCHEMA_REF_PREFIX}${problemSchemaName(status)}` },
        examples,
      },
    },
  };
}

/** The extension of a 413 response that describes API Gateway's own answers, which are not problems. */
export const GATEWAY_ANSWERS_EXTENSION = 'x-api-gateway-answers';

/**
 * API Gateway's own 413s, which are not problems and cannot be customised
 * (https://docs.aws.amazon.com/apigateway/latest/developerguide/api-gateway-known-issues.html:
 * "Customizing the default gateway response for 413 REQUEST_TOO_LARGE isn't currently supported"):
 * over its 10 MB payload limit, a text body (PAYLOAD_LIMIT_ANSWER, observed in community reports:
 * AWS documents no body); over Lambda's 6 MB invocation payload, `{"message": "Request Too Long"}`.
 * They are described in the response's description and in an extension, by media type with an
 * example, not in `content`: a typed client (openapi-typescript + openapi-fetch) makes an
 * operation's error type the union of every error's content, so a `text/plain` member made it
 * `string | Problem` and `error.type` stopped compiling, and no media-type filter helps (openapi-fetch
 * falls back to the whole content map when no member matches). A client meets them only by sending
 * a body over 6 MB, which every operation refuses anyway.
 */
export function gatewayPayloadLimitAnswers(): Record<string, { description: string; example: unknown }> {
  return {
    [PAYLOAD_LIMIT_ANSWER.headers['Content-Type']]: {
      description: "Over API Gateway's 10 MB payload limit, on the wire or once a `Content-Encoding` is decoded",
      example: PAYLOAD_LIMIT_ANSWER.body,
    },
    [REQUEST_TOO_LARGE_DEFAULT.headers['Content-Type']]: {
      description: "Over Lambda's 6 MB invocation payload (REQUEST_TOO_LARGE)",
      example: REQUEST_TOO_LARGE_DEFAULT.body,
    },
  };
}

/** What every 413's description says of API Gateway's own answers. */
export const PAYLOAD_LIMIT_DESCRIPTION =
  `Over API Gateway's 10 MB payload limit (on the wire or once a \`Content-Encoding\` is decoded), API Gateway's own text \`${PAYLOAD_LIMIT_ANSWER.body}\`; ` +
  `when the request passes Lambda's 6 MB invocation payload, API Gateway's \`${JSON.stringify(REQUEST_TOO_LARGE_DEFAULT.body)}\` as \`application/json\`. ` +
  `Neither is a problem, and API Gateway does not let either be customised: they are listed in \`${GATEWAY_ANSWERS_EXTENSION}\`, not in \`content\`, ` +
  'so that a generated client\'s error type stays the problem. Tell them by the status: a typed client\'s `error` is then a string or `{"message"}` at run time';

export function gatewayExample(type: GatewayResponseType, summary: string): ProblemExample {
  return { summary, value: gatewayResponse(type).body };
}

/** The problem the handlers answer for this error. */
export function errorExample(error: Error, summary: string): ProblemExample {
  return { summary, value: toProblem(error).problem };
}

/** An error known to the problem mapping only by its name (the AWS SDK's errors). */
export function namedError(name: string, message = name): Error {
  return Object.assign(new Error(message), { name });
}

export const HEADERS = {
  WWWAuthenticate: {
    description: 'The HTTP Basic challenge (RFC 7617)',
    required: true,
    schema: { type: 'string', const: WWW_AUTHENTICATE },
  },
  RetryAfter: {
    description: 'Seconds to wait before retrying',
    required: true,
    schema: { type: 'integer', minimum: 0, examples: [RETRY_AFTER_SECONDS] },
  },
  ETag: {
    description: "Strong entity tag of the event's current version; send it back in `If-Match` to update or delete only that version",
    required: true,
    schema: { type: 'string', pattern: '^"[1-9][0-9]*"$', examples: ['"3"'] },
  },
  AcceptEncoding: {
    description: 'The content codings a request body may have: only `identity` (RFC 9110 §12.5.3); sent when the request had another',
    required: false,
    schema: { type: 'string', const: 'identity' },
  },
  Location: {
    description: 'Path of the created event',
    required: true,
    schema: { type: 'string', format: 'uri-reference', examples: ['/v1.1/special-events/6f1e8a57-5d1c-4b8e-9b35-2f7d8e4c1a90'] },
  },
} as const;

export const HEADER_REFS = Object.fromEntries(Object.keys(HEADERS).map((name) => [name, { $ref: `#/components/headers/${name}` }])) as {
  [K in keyof typeof HEADERS]: { $ref: string };
};

/**
 * Responses every operation can receive from API Gateway or the shared middleware, whatever the
 * operation does: authentication, throttling and failures.
 */
export function sharedResponses(): Record<string, Record<string, unknown>> {
  return {
    Unauthorized: problemResponse(
      401,
      'Credentials are missing or wrong (API Gateway answers; the `WWW-Authenticate` header carries the Basic challenge)',
      { unauthorized: gatewayExample('UNAUTHORIZED', 'No valid HTTP Basic credentials') },
      { 'WWW-Authenticate': HEADER_REFS.WWWAuthenticate },
    ),
    Forbidden: problemResponse(403, "The user's role does not allow this operation (viewers may only read)", {
      forbidden: gatewayExample('ACCESS_DENIED', 'A viewer tried to change an event'),
    }),
    TooManyRequests: problemResponse(
      429,
      'API Gateway is throttling requests; retry after `Retry-After` seconds',
      { throttled: gatewayExample('THROTTLED', 'Throttled') },
      { 'Retry-After': HEADER_REFS.RetryAfter },
    ),
    InternalServerError: problemResponse(500, 'An unexpected error; it has been logged and nothing internal is revealed', {
      handler: errorExample(new Error('anything unexpected'), 'The operation failed unexpectedly'),
    }),
    BadGateway: problemResponse(502, 'The operation crashed or returned no valid response (API Gateway answers)', {
      integrationFailure: gatewayExample('INTEGRATION_FAILURE', 'The function failed'),
    }),
    ServiceUnavailable: problemResponse(
      503,
      'DynamoDB is throttling or unreachable, or the authorizer is saturated or failing, right now; retry after `Retry-After` seconds',
      {
        storeUnavailable: errorExample(namedError('ProvisionedThroughputExceededException'), 'The event store is busy'),
        authorizerUnavailable: gatewayExample('AUTHORIZER_FAILURE', 'The authorizer is throttled or failing'),
      },
      { 'Retry-After': HEADER_REFS.RetryAfter },
    ),
    GatewayTimeout: problemResponse(
      504,
      'The operation did not answer within the API Gateway integration timeout, or a write could not learn whether it applied (retry it with the same `Idempotency-Key`, or read the event)',
      {
        integrationTimeout: gatewayExample('INTEGRATION_TIMEOUT', 'The function timed out'),
      },
    ),
  };
}
