// The local gateway's method throttling keeps one token bucket per API Gateway method as the stack
// deploys them (resource path template and HTTP method), never one per concrete path: API Gateway
// applies stage throttling "at the API method level"
// (https://docs.aws.amazon.com/apigateway/latest/developerguide/api-gateway-request-throttling.html).
import { randomUUID } from 'node:crypto';
import { authenticatedMethods } from '../../functions/routes.ts';
import { METHOD_THROTTLING } from '../../functions/deployment.ts';
import { apiGatewayMethod, localThrottleLimits, MethodThrottling, UNKNOWN_PATH_RESOURCE } from '../../lib/local/gateway-throttling.ts';

/** The documents as lib/openapi/public-documents.ts lists them (not imported: it builds the OpenAPI document). */
const documentPaths = ['', '/openapi.json', '/docs'];
const WITHOUT_CORS = { documentPaths, unknownPaths: false };
const WITH_CORS = { documentPaths, unknownPaths: true };

/** One token each and (practically) no refill: the second request to a bucket is refused. */
const ONE_EACH = { rateLimit: 1e-9, burstLimit: 1 };

test('every route method is its own authenticated method, keyed by its resource path template', () => {
  const keys = authenticatedMethods().map((method) => {
    const [httpMethod, template] = method.split(' ') as [string, string];
    const concrete = template.replace(/\{[^}]+\}/g, () => randomUUID());
    return apiGatewayMethod(httpMethod, concrete, WITHOUT_CORS);
  });
  expect(keys).toEqual(authenticatedMethods());
});

test('requests to different events share the bucket of their method; other methods have their own', () => {
  const throttling = new MethodThrottling(ONE_EACH, WITHOUT_CORS);
  expect(throttling.admit('GET', `/special-events/${randomUUID()}`)).toBe(true);
  expect(throttling.admit('GET', `/special-events/${randomUUID()}`)).toBe(false);
  expect(throttling.admit('PATCH', `/special-events/${randomUUID()}`)).toBe(true);
  expect(throttling.admit('GET', '/special-events')).toBe(true);
  expect(throttling.admit('GET', '/special-events')).toBe(false);
});

test("a method a resource lacks is that resource's ANY (405), one bucket whatever the event id", () => {
  expect(apiGatewayMethod('PUT', `/special-events/${randomUUID()}`, WITHOUT_CORS)).toBe('ANY /special-events/{eventId}');
  expect(apiGatewayMethod('OPTIONS', `/special-events/${randomUUID()}`, WITHOUT_CORS)).toBe('OPTIONS /special-events/{eventId}');
  const throttling = new MethodThrottling(ONE_EACH, WITHOUT_CORS);
  expect(throttling.admit('PUT', `/special-events/${randomUUID()}`)).toBe(true);
  expect(throttling.admit('PUT', `/special-events/${randomUUID()}`)).toBe(false);
});

test('the documents are methods of their own resources: GET, HEAD, OPTIONS, and ANY for the rest', () => {
  expect(apiGatewayMethod('GET', '', WITHOUT_CORS)).toBe('GET ');
  expect(apiGatewayMethod('HEAD', '/openapi.json', WITHOUT_CORS)).toBe('HEAD /openapi.json');
  expect(apiGatewayMethod('DELETE', '/openapi.json', WITHOUT_CORS)).toBe('ANY /openapi.json');
});

test('with CORS on, every unknown path shares the bucket of the /{proxy+} method that answers it', () => {
  const throttling = new MethodThrottling(ONE_EACH, WITH_CORS);
  expect(apiGatewayMethod('GET', `/${randomUUID()}/a`, WITH_CORS)).toBe(`ANY ${UNKNOWN_PATH_RESOURCE}`);
  expect(apiGatewayMethod('OPTIONS', `/${randomUUID()}`, WITH_CORS)).toBe(`OPTIONS ${UNKNOWN_PATH_RESOURCE}`);
  expect(throttling.admit('GET', `/${randomUUID()}`)).toBe(true);
  expect(throttling.admit('POST', `/${randomUUID()}/b/c`)).toBe(false);
  expect(throttling.admit('OPTIONS', `/${randomUUID()}`)).toBe(true);
});

test('without CORS an unknown path has no method (MISSING_AUTHENTICATION_TOKEN), so no method throttle', () => {
  expect(apiGatewayMethod('GET', `/${randomUUID()}`, WITHOUT_CORS)).toBeUndefined();
  expect(apiGatewayMethod('GET', `/special-events/${randomUUID()}/more`, WITHOUT_CORS)).toBeUndefined();
  const throttling = new MethodThrottling(ONE_EACH, WITHOUT_CORS);
  for (let i = 0; i < 5; i++) expect(throttling.admit('GET', `/${randomUUID()}`)).toBe(true);
});

test('by default every method, with credentials or without (preflights, documents, 405), has the production limit of the stage', () => {
  expect(localThrottleLimits({})).toEqual(METHOD_THROTTLING.api.production);
  expect(METHOD_THROTTLING.api.production.rateLimit).toBeGreaterThanOrEqual(500);
  expect(METHOD_THROTTLING.api.production.burstLimit).toBeGreaterThanOrEqual(100);
  // A bucket of that size admits a full burst of preflights to one resource, then refuses the next.
  const throttling = new MethodThrottling({ rateLimit: 1e-9, burstLimit: METHOD_THROTTLING.api.production.burstLimit }, WITH_CORS);
  const preflights = Array.from({ length: METHOD_THROTTLING.api.production.burstLimit + 1 }, () =>
    throttling.admit('OPTIONS', `/special-events/${randomUUID()}`),
  );
  expect(preflights.filter(Boolean)).toHaveLength(METHOD_THROTTLING.api.production.burstLimit);
  expect(localThrottleLimits({ MUSEUM_THROTTLE_RATE_LIMIT: '20', MUSEUM_THROTTLE_BURST_LIMIT: '10' })).toEqual({
    rateLimit: 20,
    burstLimit: 10,
  });
});
