// RFC 9110 §13.2.1: a server evaluates If-Match and If-None-Match only when its answer without
// them would be 2xx or 412. So a request that fails any other check (a header such as
// Idempotency-Key, the body, the query, the path, the content type, a method override) gets the
// same answer with and without preconditions, on every method. Over HTTP against the local API,
// for generated methods × malformed request parts × preconditions.
import fc from 'fast-check';
import { api, createEvent, type ApiResponse } from '../support/api-client.ts';
import { jestTimeoutFor, propertyRuns } from './property-runs.ts';
import { dayOfYear, RESERVED_YEARS } from './reserved-years.ts';

const TIME_LIMIT_MS = 120_000;

type Route = 'create' | 'update' | 'delete' | 'read' | 'list';

interface Request {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string;
}

/** One malformed part of a request: changes it so that it fails one check of the operation. */
interface Fault {
  name: string;
  routes: readonly Route[];
  apply(request: Request): void;
}

const WRITES_WITH_BODY: Route[] = ['create', 'update'];
const WRITES: Route[] = ['create', 'update', 'delete'];
const ON_ONE_EVENT: Route[] = ['update', 'delete', 'read'];
const EVERY_ROUTE: Route[] = ['create', 'update', 'delete', 'read', 'list'];

const FAULTS: Fault[] = [
  { name: 'empty Idempotency-Key', routes: WRITES, apply: (r) => void (r.headers['Idempotency-Key'] = '') },
  { name: 'Idempotency-Key of 301 characters', routes: WRITES, apply: (r) => void (r.headers['Idempotency-Key'] = 'k'.repeat(301)) },
  { name: 'unknown query parameter', routes: EVERY_ROUTE, apply: (r) => void (r.path += '?colour=red') },
  { name: 'method override', routes: EVERY_ROUTE, apply: (r) => void (r.headers['X-HTTP-Method-Override'] = 'GET') },
  { name: 'event id that is no UUID', routes: ON_ONE_EVENT, apply: (r) => void (r.path = r.path.replace(/[^/]+$/, 'not-an-id')) },
  { name: 'body that is not JSON', routes: WRITES_WITH_BODY, apply: (r) => void (r.body = '{"name": ') },
  { name: 'body that is an array', routes: WRITES_WITH_BODY, apply: (r) => void (r.body = '[]') },
  { name: 'body with a wrong type', routes: WRITES_WITH_BODY, apply: (r) => void (r.body = '{"price": "free"}') },
  { name: 'body with an unknown field', routes: WRITES_WITH_BODY, apply: (r) => void (r.body = '{"colour": "red"}') },
  { name: 'body with a duplicate key', routes: WRITES_WITH_BODY, apply: (r) => void (r.body = '{"price": 1, "price": 2}') },
  { name: 'empty body', routes: WRITES_WITH_BODY, apply: (r) => void (r.body = '') },
  { name: 'body as text/plain', routes: WRITES_WITH_BODY, apply: (r) => void (r.headers['Content-Type'] = 'text/plain') },
  { name: 'gzip content coding', routes: WRITES_WITH_BODY, apply: (r) => void (r.headers['Content-Encoding'] = 'gzip') },
  { name: 'list window backwards', routes: ['list'], apply: (r) => void (r.path += '?startDate=2031-02-02&endDate=2031-02-01') },
  { name: 'list limit 0', routes: ['list'], apply: (r) => void (r.path += '?limit=0') },
];

/** Valid preconditions: some hold for the target event, some fail, some fail every POST. */
const PRECONDITIONS: Record<string, string>[] = [
  { 'If-Match': '"1"' },
  { 'If-Match': '"3"' },
  { 'If-Match': '*' },
  { 'If-Match': 'W/"1"' },
  { 'If-Match': '"2", "3"' },
  { 'If-None-Match': '*' },
  { 'If-None-Match': '"1"' },
  { 'If-None-Match': '"7"' },
  { 'If-Match': '"3"', 'If-None-Match': '*' },
];

function baseRequest(route: Route, eventId: string): Request {
  const json = { 'Content-Type': 'application/json' };
  const date = dayOfYear(RESERVED_YEARS.scratch, 40);
  switch (route) {
    case 'create':
      return {
        method: 'POST',
        path: '/special-events',
        headers: json,
        body: JSON.stringify({ name: 'Order', location: 'Hall', eventDescription: 'Checks before preconditions', dates: [date], price: 1 }),
      };
    case 'update':
      return { method: 'PATCH', path: `/special-events/${eventId}`, headers: json, body: '{"price": 2}' };
    case 'delete':
      return { method: 'DELETE', path: `/special-events/${eventId}`, headers: {} };
    case 'read':
      return { method: 'GET', path: `/special-events/${eventId}`, headers: {} };
    case 'list':
      return { method: 'GET', path: '/special-events', headers: {} };
  }
}

const send = (request: Request): Promise<ApiResponse<{ type?: string; detail?: string } | undefined>> =>
  api(request.method, request.path, {
    headers: request.headers,
    ...(request.body === undefined ? {} : { rawBody: request.body }),
    skipContract: true, // malformed requests: the fuzz checks their answers against the contract
  });

/** What must not change: the status and, for a problem, its type and detail. */
const outcome = (response: ApiResponse<{ type?: string; detail?: string } | undefined>) => ({
  status: response.status,
  type: response.body?.type,
  detail: response.body?.detail,
});

const requestCase = fc.constantFrom<Route>(...EVERY_ROUTE).chain((route) =>
  fc.record({
    route: fc.constant(route),
    faults: fc.subarray(
      FAULTS.filter((fault) => fault.routes.includes(route)),
      { minLength: 1, maxLength: 2 },
    ),
    preconditions: fc.constantFrom(...PRECONDITIONS),
  }),
);

describe('request checks come before preconditions (RFC 9110 §13.2.1)', () => {
  test(
    'a request that fails a check answers the same 4xx with and without If-Match or If-None-Match, on every method',
    async () => {
      const target = await createEvent({ dates: [dayOfYear(RESERVED_YEARS.scratch, 41)] });
      await fc.assert(
        fc.asyncProperty(requestCase, async ({ route, faults, preconditions }) => {
          const plain = baseRequest(route, target.eventId);
          for (const fault of faults) fault.apply(plain);
          const without = outcome(await send(plain));
          // Every fault makes the request fail a check: a 2xx would mean a write happened.
          expect(without.status).toBeGreaterThanOrEqual(400);
          expect(without.status).toBeLessThan(500);
          expect(without.status).not.toBe(412);
          const conditional = { ...plain, headers: { ...plain.headers, ...preconditions } };
          expect({ faults: faults.map((f) => f.name), preconditions, ...outcome(await send(conditional)) }).toEqual({
            faults: faults.map((f) => f.name),
            preconditions,
            ...without,
          });
        }),
        propertyRuns(150, TIME_LIMIT_MS),
      );
    },
    jestTimeoutFor(TIME_LIMIT_MS),
  );

  test('POST with an Idempotency-Key of 301 characters and If-Match: "3" answers 400, as without If-Match', async () => {
    const request = baseRequest('create', '');
    request.headers = { ...request.headers, 'Idempotency-Key': 'k'.repeat(301), 'If-Match': '"3"' };
    const response = await send(request);
    expect(outcome(response)).toMatchObject({ status: 400, detail: 'Idempotency-Key must be 1 to 255 characters' });
  });
});
