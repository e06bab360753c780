// The response checker that every end-to-end test relies on: it must reject what the contract
// does not promise, or the e2e suite proves nothing.
import { readFileSync } from 'node:fs';
import { gatewayResponse } from '../../functions/http/gateway-responses.ts';
import { problemBody } from '../../functions/events/problems.ts';
import { COMMITTED_OPENAPI_FILE, ContractChecker, ContractViolation, type ObservedResponse } from '../support/contract.ts';

const checker = new ContractChecker(JSON.parse(readFileSync(COMMITTED_OPENAPI_FILE, 'utf8')) as Record<string, unknown>);
const eventId = '6f1e8a57-5d1c-4b8e-9b35-2f7d8e4c1a90';
/** What every GET 200 carries (functions/http/read-responses.ts). */
const READ = { 'Cache-Control': 'private, no-cache', Vary: 'Authorization, Origin, Accept' };
const LIST = { ...READ, ETag: '"mC3y0lE2G1xWq9v8b7n6aA"', Link: '<?startDate=2031-05-01&endDate=2031-05-08&page=1&limit=5>; rel="first"' };
const event = { eventId, name: 'Night at the Museum', location: 'Main Hall', eventDescription: 'Tour', dates: ['2031-05-01'], price: 25 };

function response(status: number, body: unknown, headers: Record<string, string> = {}): ObservedResponse {
  const text = body === undefined ? '' : JSON.stringify(body);
  const contentType = status >= 400 ? 'application/problem+json' : 'application/json';
  return { status, text, headers: new Headers(body === undefined ? headers : { 'Content-Type': contentType, ...headers }) };
}

const accepts = (method: string, path: string, observed: ObservedResponse) =>
  expect(() => checker.check(method, path, observed)).not.toThrow();
function rejects(method: string, path: string, observed: ObservedResponse, message: RegExp): void {
  let thrown: unknown;
  try {
    checker.check(method, path, observed);
  } catch (error) {
    thrown = error;
  }
  expect(thrown).toBeInstanceOf(ContractViolation);
  expect((thrown as Error).message).toMatch(message);
}

describe('the contract checker', () => {
  test('accepts documented responses', () => {
    accepts('GET', `/special-events/${eventId}`, response(200, event, { ETag: '"1"', ...READ }));
    accepts('GET', '/special-events?startDate=2031-05-01&limit=5', response(200, [event], LIST));
    accepts('POST', '/special-events', response(201, event, { ETag: '"1"', Location: `/v1.1/special-events/${eventId}` }));
    accepts('DELETE', `/special-events/${eventId}`, response(204, undefined));
    accepts('GET', `/special-events/${eventId}`, response(404, problemBody('not-found', 'No special event has this id')));
    accepts('GET', `/special-events/${eventId}`, response(304, undefined, { ETag: '"1"', ...READ }));
    accepts('HEAD', `/special-events/${eventId}`, {
      status: 200,
      text: '',
      headers: new Headers({ 'Content-Type': 'application/json', ETag: '"1"', ...READ }),
    });
  });

  test('rejects a HEAD answer with content, and a 304 without its validator', () => {
    rejects('HEAD', `/special-events/${eventId}`, response(200, event, { ETag: '"1"', ...READ }), /HEAD answer has no content/);
    rejects('GET', `/special-events/${eventId}`, response(304, undefined, READ), /header ETag is missing/);
  });

  test('rejects a status the operation does not document', () => {
    rejects('GET', '/special-events', response(404, problemBody('not-found', 'x')), /status 404 is not documented for listSpecialEvents/);
    rejects('GET', '/special-events', response(403, gatewayResponse('ACCESS_DENIED').body), /status 403 is not documented/);
  });

  test('rejects a body that does not match the schema', () => {
    rejects(
      'GET',
      `/special-events/${eventId}`,
      response(200, { ...event, version: 3 }, { ETag: '"1"', ...READ }),
      /does not match the documented schema/,
    );
    rejects('GET', `/special-events/${eventId}`, response(200, { ...event, price: '25' }, { ETag: '"1"', ...READ }), /does not match/);
    rejects(
      'GET',
      `/special-events/${eventId}`,
      response(200, { ...event, dates: ['2031-02-30'] }, { ETag: '"1"', ...READ }),
      /does not match/,
    );
    rejects(
      'GET',
      '/special-events',
      response(
        200,
        Array.from({ length: 31 }, () => event),
        LIST,
      ),
      /does not match/,
    );
    rejects(
      'GET',
      `/special-events/${eventId}`,
      response(400, problemBody('not-found', 'x')),
      /status 400 is not documented|does not match/,
    );
  });

  test('rejects a wrong content type and a body where none is documented', () => {
    rejects(
      'GET',
      `/special-events/${eventId}`,
      { ...response(200, event, { ETag: '"1"', ...READ }), headers: new Headers({ 'Content-Type': 'text/plain', ETag: '"1"', ...READ }) },
      /content type "text\/plain" is not documented/,
    );
    rejects(
      'GET',
      `/special-events/${eventId}`,
      { ...response(404, problemBody('not-found', 'x')), headers: new Headers({ 'Content-Type': 'application/json' }) },
      /content type "application\/json" is not documented/,
    );
    rejects('DELETE', `/special-events/${eventId}`, response(204, {}), /declares no body/);
  });

  test('rejects a missing or malformed documented header', () => {
    rejects('GET', `/special-events/${eventId}`, response(200, event), /header ETag is missing/);
    rejects('GET', `/special-events/${eventId}`, response(200, event, { ETag: 'W/"1"', ...READ }), /header ETag/);
    rejects('POST', '/special-events', response(201, event, { ETag: '"1"' }), /header Location is missing/);
    rejects('GET', '/special-events', response(401, gatewayResponse('UNAUTHORIZED').body), /header WWW-Authenticate is missing/);
  });

  test("requests outside the contract must get one of API Gateway's gateway responses", () => {
    accepts('GET', '/tickets', response(404, gatewayResponse('MISSING_AUTHENTICATION_TOKEN').body));
    accepts('PUT', '/special-events', response(404, gatewayResponse('MISSING_AUTHENTICATION_TOKEN').body));
    rejects('GET', '/tickets', response(200, []), /outside the contract/);
    rejects('GET', '/tickets', response(404, problemBody('not-found', 'made up')), /none of API Gateway's gateway responses/);
  });
});
