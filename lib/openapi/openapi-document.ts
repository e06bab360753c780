// The OpenAPI 3.1 document of the API, built from the code that runs: paths, methods, roles and
// success statuses from the route table, schemas from the valibot schemas the handlers validate
// with, problems from the problem catalogue, gateway answers from the gateway-response table.
// `npm run openapi` writes it to openapi/openapi.json; the local API serves it fresh. This module
// assembles the document; its parts are in document-schemas.ts, examples.ts, operations.ts (one
// entry per operation), parameters.ts, service-index-operation.ts, problem-responses.ts and
// read-semantics.ts.
import { LIMITS } from '../../functions/events/limits.ts';
import { PROBLEM_CONTENT_TYPE } from '../../functions/events/problems.ts';
import { SCHEMA_DESCRIPTIONS } from '../../functions/events/event-schema.ts';
import { methodNotAllowedResponse } from '../../functions/http/gateway-responses.ts';
import { API_VERSION, BASE_PATH, isAuthenticated, ROLES, routes, type OperationId, type Route } from '../../functions/routes.ts';
import { resourceMethods } from '../../functions/route-matching.ts';
import { ChangeEvent, ChangeFeedPage, EVENT_SCHEMAS, SpecialEventList } from './document-schemas.ts';
import { componentSchemas } from './json-schemas.ts';
import { operationDetails, successResponse, type OperationDetails } from './operations.ts';
import { parameters } from './parameters.ts';
import { HEADERS, methodNotAllowedProblemResponse, problemSchemas, sharedResponses } from './problem-responses.ts';
import { READ_HEADERS, READ_SEMANTICS_DESCRIPTION } from './read-semantics.ts';
import { JSON_LD_SCHEMAS, NEGOTIATION_HEADERS } from './json-ld-document.ts';
import { INDEX_TAG, ServiceIndex, serviceIndexOperation } from './service-index-operation.ts';
import { webhooksEntry } from './webhook-operations.ts';
import { WEBHOOK_SCHEMAS } from './webhook-schemas.ts';
import { CALENDAR_SCHEMAS } from './calendar-operations.ts';

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
const WEBHOOK_TAG = 'Webhook subscriptions';
const CALENDAR_TAG = 'Calendar feeds';

/** Statuses every operation shares, answered by API Gateway or the shared middleware. */
function sharedResponseRefs(route: Route): Record<number, unknown> {
  const ref = (name: string) => ({ $ref: `#/components/responses/${name}` });
  const everyRoleAllowed = route.role === ROLES[0];
  // A route without credentials has no 401 or 403, and describes its own 429 (calendar-operations.ts).
  const authenticated = isAuthenticated(route);
  return {
    ...(authenticated ? { 401: ref('Unauthorized') } : {}),
    ...(everyRoleAllowed || !authenticated ? {} : { 403: ref('Forbidden') }),
    ...(authenticated ? { 429: ref('TooManyRequests') } : {}),
    500: ref('InternalServerError'),
    502: ref('BadGateway'),
    503: ref('ServiceUnavailable'),
    504: ref('GatewayTimeout'),
  };
}

function operation(route: Route<OperationId>, details: OperationDetails): OpenApiOperation {
  const responses: Record<string, unknown> = {
    [route.successStatus]: successResponse(details),
    ...details.errors,
    ...sharedResponseRefs(route),
  };
  const sorted = Object.fromEntries(Object.entries(responses).sort(([a], [b]) => Number(a) - Number(b)));
  if (!isAuthenticated(route)) {
    return {
      operationId: route.operationId,
      summary: route.summary,
      description: `${details.description}\n\nNo credentials: the request itself carries its secret.`,
      tags: [CALENDAR_TAG],
      security: [],
      ...(details.parameters.length ? { parameters: details.parameters } : {}),
      responses: sorted,
    };
  }
  return {
    operationId: route.operationId,
    summary: route.summary,
    description: `${details.description}\n\nRequires the **${route.role}** role${route.role === ROLES[0] ? ' (every user has it)' : ''}.`,
    tags: [route.path.startsWith('/webhook-subscriptions') ? WEBHOOK_TAG : route.path.startsWith('/calendar') ? CALENDAR_TAG : TAG],
    security: [{ [SECURITY_SCHEME]: [] }],
    ...(details.parameters.length ? { parameters: details.parameters } : {}),
    ...(details.requestBody ? { requestBody: details.requestBody } : {}),
    responses: sorted,
    'x-required-role': route.role,
  };
}

const API_DESCRIPTION = `Create, list, read, partially update and delete the museum's special events.

**Authentication.** Every operation but a calendar feed's address (whose secret token is its credential) needs HTTP Basic credentials (\`${SECURITY_SCHEME}\`). Users with the *viewer* role may read; the *partner* role may also manage its own webhook subscriptions; the *editor* role may also create, update and delete events and manage every subscription.

**Errors** are [RFC 9457](https://www.rfc-editor.org/rfc/rfc9457) problem details (\`${PROBLEM_CONTENT_TYPE}\`) whose \`type\` names the problem; validation failures list every invalid input in \`errors\`. A path the API does not have is a 404 problem; a method a path does not have is a 405 problem with the path's methods in \`Allow\` (see each path's \`x-method-not-allowed\`).

**Requests.** Bodies are JSON objects in UTF-8 without a content coding (\`Content-Encoding\` other than \`identity\` is a 415); bytes that are not UTF-8, U+FFFD anywhere in the body (what a gateway puts in place of such bytes), and a field given twice are 400s. Query parameters an operation does not define, or a parameter given twice, are 400s. Text fields count length in Unicode code points, as JSON Schema does. An event's dates may fall in at most ${LIMITS.maxEventMonths} distinct months (a 400 names the limit): split a longer series into several events.

${READ_SEMANTICS_DESCRIPTION}

**Versions and retries.** \`GET\`, \`POST\` and \`PATCH\` return the event's version as a strong \`ETag\`; send it in \`If-Match\` to update or delete only that version. \`POST\` accepts an \`Idempotency-Key\` so that a retried create does not create twice.

This document is generated from the service's code; it is served at \`${BASE_PATH}/openapi.json\` and rendered at \`${BASE_PATH}/docs\`.`;

export function buildOpenApiDocument(): OpenApiDocument {
  const paths: Record<string, Record<string, OpenApiOperation>> = { '/': { get: serviceIndexOperation() as unknown as OpenApiOperation } };
  // The public documents (the index here; openapi.json and docs are not operations) have GET only.
  const documentMethods = [...resourceMethods(), ['/', ['GET']] as const];
  for (const route of routes) {
    (paths[route.path] ??= {})[route.method.toLowerCase()] = operation(route, operationDetails(route));
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
      { name: WEBHOOK_TAG, description: 'Signed deliveries of every change to a URL of a partner (docs/WEBHOOKS.md)' },
      { name: CALENDAR_TAG, description: "Secret iCalendar addresses a visitor's calendar app subscribes to, cancellations included" },
    ],
    paths,
    webhooks: webhooksEntry(),
    components: {
      schemas: {
        ...componentSchemas({ ...EVENT_SCHEMAS, SpecialEventList, ServiceIndex, ChangeEvent, ChangeFeedPage }, SCHEMA_DESCRIPTIONS),
        ...problemSchemas(),
        ...WEBHOOK_SCHEMAS,
        ...JSON_LD_SCHEMAS,
        ...CALENDAR_SCHEMAS,
      },
      parameters: parameters(),
      headers: { ...HEADERS, ...READ_HEADERS, ...NEGOTIATION_HEADERS },
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
