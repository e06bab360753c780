// The OpenAPI document: generated from the code, committed as generated, and saying what the code does.
import { readFileSync } from 'node:fs';
import { FRONT_END_KINDS, PROBLEM_KINDS, type ProblemKind } from '../../functions/events/problems.ts';
import { PAYLOAD_LIMIT_ANSWER, REQUEST_TOO_LARGE_DEFAULT } from '../../functions/http/gateway-responses.ts';
import { LIMITS } from '../../functions/events/limits.ts';
import { API_VERSION, BASE_PATH, isAuthenticated, ROLES, routes } from '../../functions/routes.ts';
import { allowHeader } from '../../functions/route-matching.ts';
import { buildOpenApiDocument, serializeOpenApiDocument } from '../../lib/openapi/openapi-document.ts';
import { COMMITTED_OPENAPI_FILE, ContractChecker } from '../support/contract.ts';

const document = buildOpenApiDocument();
type Json = Record<string, any>; // walking a JSON document
const json = document as Json;
const isOperation = (key: string) => ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'].includes(key);
const allOperations = Object.entries(document.paths).flatMap(([path, item]) =>
  Object.entries(item)
    .filter(([method]) => isOperation(method))
    .map(([method, operation]) => ({ path, method, operation })),
);
/** The operations of the route table (the service index at `/` is documented apart). */
const operations = allOperations.filter(({ path }) => path !== '/');
const resolve = (object: Json): Json =>
  typeof object.$ref === 'string'
    ? object.$ref
        .slice(2)
        .split('/')
        .reduce((node: Json, key: string) => node[key], json)
    : object;

describe('the committed openapi/openapi.json', () => {
  test('is exactly what `npm run openapi` generates from the code', () => {
    const committed = readFileSync(COMMITTED_OPENAPI_FILE, 'utf8');
    // On failure: run `npm run openapi` and commit openapi/openapi.json.
    expect(committed === serializeOpenApiDocument(document) ? 'up to date' : 'stale: run `npm run openapi`').toBe('up to date');
  });
});

describe('the OpenAPI document', () => {
  test('is OpenAPI 3.1 for interface version 1.1.1 with production, mock and local servers', () => {
    expect(document.openapi).toMatch(/^3\.1\./);
    expect(document.info.version).toBe(API_VERSION);
    expect(API_VERSION).toBe('1.1.1');
    const [production, mock, local] = document.servers;
    expect(production?.url).toMatch(new RegExp(`^https://[^/]+${BASE_PATH.replace('.', '\\.')}$`));
    expect(mock?.url).not.toContain(BASE_PATH);
    expect(local?.url).toBe(`http://127.0.0.1:3000${BASE_PATH}`);
  });

  test('has exactly the routes of the route table, each with its operationId and success status', () => {
    expect(operations.map(({ operation }) => operation.operationId).sort()).toEqual(routes.map((route) => route.operationId).sort());
    for (const route of routes) {
      const operation = document.paths[route.path]?.[route.method.toLowerCase()];
      expect(operation?.operationId).toBe(route.operationId);
      expect(Object.keys(operation?.responses ?? {})).toContain(String(route.successStatus));
      expect(operation?.['x-required-role']).toBe(isAuthenticated(route) ? route.role : undefined);
    }
  });

  test('protects every operation with MuseumPlaceholderAuth, HTTP Basic, but those of routes without credentials (security: none)', () => {
    expect(json.components.securitySchemes.MuseumPlaceholderAuth).toMatchObject({ type: 'http', scheme: 'basic' });
    for (const route of routes) {
      const operation = document.paths[route.path]?.[route.method.toLowerCase()];
      expect([route.operationId, operation?.security]).toEqual([
        route.operationId,
        isAuthenticated(route) ? [{ MuseumPlaceholderAuth: [] }] : [],
      ]);
    }
    expect(routes.filter((route) => !isAuthenticated(route)).map((route) => route.operationId)).toEqual(['getCalendarFeed']);
  });

  test("documents the problems every operation can meet, as problem+json, and API Gateway's uncustomisable 413s beside them, outside `content`", () => {
    for (const { operation } of operations) {
      const statuses = Object.keys(operation.responses).map(Number);
      const authenticated = operation.security.length > 0;
      expect(statuses).toEqual(expect.arrayContaining([400, 413, 429, 500, 502, 503, 504]));
      expect(statuses.includes(401)).toBe(authenticated);
      // Only a role above viewer (every user's) can be refused.
      expect(statuses.includes(403)).toBe(authenticated && operation['x-required-role'] !== ROLES[0]);
      for (const status of statuses.filter((s) => s >= 400 && s !== 413)) {
        expect(Object.keys(resolve(operation.responses[status] as Json).content)).toEqual(['application/problem+json']);
      }
      // REQUEST_TOO_LARGE cannot be customised: API Gateway's own bodies are described in an
      // extension, and the content is the handler's problem where the handler limits the body.
      const tooLarge = resolve(operation.responses[413] as Json);
      expect(tooLarge['x-api-gateway-answers']['text; charset=utf-8'].example).toBe(PAYLOAD_LIMIT_ANSWER.body);
      expect(tooLarge['x-api-gateway-answers']['application/json'].example).toEqual(REQUEST_TOO_LARGE_DEFAULT.body);
      expect(Object.keys((tooLarge.content ?? {}) as Json)).toEqual(operation.requestBody ? ['application/problem+json'] : []);
    }
    const documented = new Set(operations.flatMap(({ operation }) => Object.keys(operation.responses).map(Number)));
    if (Object.values(json.paths as Json).some((item) => item['x-method-not-allowed'])) documented.add(405);
    for (const [kind, { status }] of Object.entries(PROBLEM_KINDS)) {
      if (!FRONT_END_KINDS.includes(kind as ProblemKind)) expect([kind, documented.has(status)]).toEqual([kind, true]);
    }
  });

  // A typed client (openapi-typescript, openapi-fetch) makes an operation's error type the union of
  // its error bodies: one member that is not a problem (JSON or text), and `error.type` no longer
  // compiles (test/contract/typed-client.test.ts compiles such a client).
  test('keeps every error a typed client reads a problem: each member of a 4xx/5xx content references a problem schema', () => {
    const problemSchemas = Object.keys(json.components.schemas as Json).filter((name) => name.endsWith('Problem'));
    for (const { path, method, operation } of allOperations) {
      for (const [status, response] of Object.entries(operation.responses as Json)) {
        if (Number(status) < 400) continue;
        for (const [mediaType, member] of Object.entries((resolve(response as Json).content ?? {}) as Json)) {
          const where = `${method.toUpperCase()} ${path} ${status} ${mediaType}`;
          expect([where, mediaType]).toEqual([where, 'application/problem+json']);
          const reference = String((member as Json).schema.$ref ?? '');
          expect([where, problemSchemas.includes(reference.split('/').pop() ?? '')]).toEqual([where, true]);
        }
      }
    }
  });

  test('keeps the bounds, formats and defaults of the valibot schemas', () => {
    const schemas = json.components.schemas;
    expect(schemas.EventId).toMatchObject({ type: 'string', format: 'uuid' });
    expect(schemas.EventName).toMatchObject({ minLength: 1, maxLength: LIMITS.nameLength });
    expect(schemas.EventLocation).toMatchObject({ minLength: 1, maxLength: LIMITS.locationLength });
    expect(schemas.EventDescription).toMatchObject({ minLength: 1, maxLength: LIMITS.descriptionLength });
    expect(schemas.CalendarDate).toMatchObject({ type: 'string', format: 'date' });
    expect(schemas.EventDates).toMatchObject({ type: 'array', minItems: 1, maxItems: LIMITS.maxDates });
    expect(schemas.EventPrice).toMatchObject({ type: 'number', minimum: 0, maximum: LIMITS.maxPrice });
    expect(schemas.SpecialEvent.required).toEqual(['eventId', 'name', 'location', 'eventDescription', 'dates', 'price']);
    expect(schemas.CreateSpecialEventRequest).toMatchObject({ additionalProperties: false });
    expect(schemas.CreateSpecialEventRequest.required).toHaveLength(5);
    expect(schemas.UpdateSpecialEventRequest).toMatchObject({ additionalProperties: false, minProperties: 1, required: [] });
    expect(schemas.SpecialEventList).toMatchObject({ maxItems: LIMITS.maxListLimit });
    const parameters = json.components.parameters;
    expect(parameters.Limit).toMatchObject({
      in: 'query',
      schema: { type: 'integer', minimum: 1, maximum: LIMITS.maxListLimit, default: LIMITS.defaultListLimit },
    });
    expect(parameters.Page).toMatchObject({
      in: 'query',
      schema: { type: 'integer', minimum: 1, maximum: LIMITS.maxListPage, default: 1 },
    });
    expect(parameters.StartDate).toMatchObject({ in: 'query', schema: { format: 'date' } });
    expect(parameters.EndDate).toMatchObject({ in: 'query', schema: { format: 'date' } });
  });

  test('documents the Idempotency-Key bounds the create handler enforces', () => {
    expect(json.components.parameters.IdempotencyKey.schema).toEqual({
      type: 'string',
      minLength: 1,
      maxLength: LIMITS.idempotencyKeyLength,
    });
    expect(json.components.parameters.IdempotencyKey.description).toContain(`${LIMITS.idempotencyWindowHours} hours`);
  });

  test('documents the headers: Location and ETag on success, If-Match, If-None-Match and Idempotency-Key on requests, challenges and Retry-After on errors', () => {
    const byId = Object.fromEntries(operations.map(({ operation }) => [operation.operationId, operation]));
    const headersOf = (operationId: string, status: number) =>
      Object.keys(resolve(byId[operationId]!.responses[status] as Json).headers ?? {});
    expect(headersOf('createSpecialEvent', 201)).toEqual(['Location', 'ETag']);
    expect(headersOf('getSpecialEvent', 200)).toEqual(['ETag', 'Cache-Control', 'Vary']);
    expect(headersOf('getSpecialEvent', 304)).toEqual(['ETag', 'Cache-Control', 'Vary']);
    expect(headersOf('listSpecialEvents', 200)).toEqual(['ETag', 'Cache-Control', 'Vary', 'Link']);
    expect(headersOf('listSpecialEvents', 304)).toEqual(['ETag', 'Cache-Control', 'Vary']);
    expect(headersOf('updateSpecialEvent', 200)).toEqual(['ETag']);
    for (const operationId of Object.keys(byId)) {
      if (byId[operationId]!.security.length > 0) expect(headersOf(operationId, 401)).toEqual(['WWW-Authenticate']);
      expect(headersOf(operationId, 429)).toEqual(['Retry-After']);
      expect(headersOf(operationId, 503)).toEqual(['Retry-After']);
    }
    const parameterNames = (operationId: string) => (byId[operationId]!.parameters as Json[]).map((p) => resolve(p).name);
    expect(parameterNames('createSpecialEvent')).toEqual(['If-Match', 'If-None-Match', 'Idempotency-Key']);
    expect(parameterNames('updateSpecialEvent')).toEqual(['eventId', 'If-Match', 'If-None-Match', 'Idempotency-Key']);
    expect(parameterNames('deleteSpecialEvent')).toEqual(['eventId', 'If-Match', 'If-None-Match', 'Idempotency-Key']);
    expect(parameterNames('listSpecialEvents')).toEqual(['startDate', 'endDate', 'page', 'limit', 'If-Match', 'If-None-Match']);
    expect(parameterNames('getSpecialEvent')).toEqual(['eventId', 'If-Match', 'If-None-Match']);
  });

  test('documents the precondition answers of every operation (RFC 9110 §13): 412 everywhere, a malformed precondition a 400, no 428', () => {
    const byId = Object.fromEntries(operations.map(({ operation }) => [operation.operationId, operation]));
    for (const operationId of ['createSpecialEvent', 'listSpecialEvents', 'getSpecialEvent', 'updateSpecialEvent', 'deleteSpecialEvent']) {
      const responses = byId[operationId]!.responses as Json;
      expect([operationId, '412' in responses, '428' in responses]).toEqual([operationId, true, false]);
      const examples = Object.keys(resolve(responses['400'] as Json).content['application/problem+json'].examples);
      expect(examples).toEqual(expect.arrayContaining(['invalidIfMatch', 'invalidIfNoneMatch']));
    }
    // A failed If-Match on a read says the current tag.
    expect(Object.keys(resolve(byId.getSpecialEvent!.responses['412'] as Json).headers)).toEqual(['ETag']);
    expect(Object.keys(resolve(byId.listSpecialEvents!.responses['412'] as Json).headers)).toEqual(['ETag']);
  });

  test('documents the service index at `/` (the base URL itself) without credentials, with its RFC 8631 Link header', () => {
    const index = json.paths['/'].get;
    expect(index).toMatchObject({ operationId: 'getServiceIndex', security: [] });
    expect(Object.keys(index.responses['200'].headers)).toEqual(['Link', 'ETag']);
    expect(Object.keys(index.responses['304'].headers)).toEqual(['ETag']);
    expect(resolve(index.responses['200'].content['application/json'].schema).required).toEqual(['name', 'version', 'links']);
  });

  test('documents 405 with Allow for the methods each path does not have', () => {
    for (const [, item] of Object.entries(json.paths as Json).filter(([path]) => path !== '/')) {
      const methods = Object.keys(item)
        .filter(isOperation)
        .map((method) => method.toUpperCase());
      const answer = (item as Json)['x-method-not-allowed'];
      expect(answer.headers.Allow.schema.const).toBe(allowHeader(methods));
      expect(answer.headers.Allow.schema.const).toContain(methods.includes('GET') ? 'GET, HEAD' : 'OPTIONS');
      expect(Object.keys(answer.content)).toEqual(['application/problem+json']);
      expect((item as Json).description).toContain('405');
    }
  });

  test('publishes the rules in the portable pattern subset: no \\p{..} classes, no \\d, no lookaround', () => {
    const patterns: string[] = [];
    JSON.stringify(json, (key, value) => {
      if (key === 'pattern' && typeof value === 'string') patterns.push(value);
      return value;
    });
    expect(patterns.length).toBeGreaterThanOrEqual(5);
    for (const pattern of patterns) expect(pattern).not.toMatch(/\\[pPdDwWsSbB]|\(\?[=!<]/);
    const schemas = json.components.schemas;
    expect(schemas.EventPrice.multipleOf).toBe(0.01);
    expect(new RegExp(schemas.CalendarDate.pattern).test('0299-01-01')).toBe(false);
    expect(new RegExp(schemas.CalendarDate.pattern).test('1900-01-01')).toBe(true);
    expect(new RegExp(schemas.EventName.pattern, 'u').test(' \t')).toBe(false);
    expect(new RegExp(schemas.EventName.pattern, 'u').test('\u200b\u200d\ufeff')).toBe(false);
    expect(new RegExp(json.components.parameters.IfMatch.schema.pattern).test('"x,y", W/"2", "1"')).toBe(true);
  });

  test('every response example passes the contract checker, headers included', () => {
    const checker = new ContractChecker(json);
    let checked = 0;
    for (const { path, method, operation } of allOperations) {
      for (const [status, declared] of Object.entries(operation.responses)) {
        const response = resolve(declared as Json);
        const headers = new Headers();
        for (const [name, header] of Object.entries((response.headers ?? {}) as Json)) {
          headers.set(name, String(resolve(header).schema.examples?.[0] ?? resolve(header).schema.const));
        }
        const concretePath = path === '/' ? '' : path.replace('{eventId}', '6f1e8a57-5d1c-4b8e-9b35-2f7d8e4c1a90');
        if (!response.content) {
          checker.check(method.toUpperCase(), concretePath, { status: Number(status), headers, text: '' });
          checked++;
          continue;
        }
        for (const [mediaType, media] of Object.entries(response.content as Json)) {
          expect(Object.keys(media.examples ?? {}).length).toBeGreaterThan(0);
          for (const example of Object.values(media.examples as Json)) {
            headers.set('Content-Type', mediaType);
            checker.check(method.toUpperCase(), concretePath, { status: Number(status), headers, text: JSON.stringify(example.value) });
            checked++;
          }
        }
      }
    }
    expect(checked).toBeGreaterThan(60);
  });
});
