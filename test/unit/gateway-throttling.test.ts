// The local gateway's method throttling keeps one token bucket per API Gateway method as the stack
// deploys them (resource path template and HTTP method), never one per concrete path: API Gateway
// applies stage throttling "at the API method level"
// (https://docs.aws.amazon.com/apigateway/latest/developerguide/api-gateway-request-throttling.html).
import { randomUUID } from 'node:crypto';
import { authenticatedMethods } from '../../functions/routes.ts';
import { apiGatewayMethod, MethodThrottling, UNKNOWN_PATH_RESOURCE } from '../../lib/local/gateway-throttling.ts';

/** The documents as lib/openapi/public-documents.ts lists them (not imported: it builds the OpenAPI document). */
const documentPaths = ['', '/openapi.json', '/docs'];
const WITHOUT_CORS = { documentPaths, unknownPaths: false };
const WITH_CORS = { documentPaths, unknownPaths: true };

/** One token each and (practically) no refill: the second request to a bucket is refused. */
const ONE_EACH = { authenticated: { rateLimit: 1e-9, burstLimit: 1 }, unauthenticated: { rateLimit: 1e-9, burstLimit: 1 } };

test('every route method is its own authenticated method, keyed by its resource path template', () => {
  const keys = authenticatedMethods().map((method) => {
    const [httpMethod, template] = method.split(' ') as [string, string];
    const concrete = template.replace(/\{[^}]+\}/g, () => randomUUID());
    return apiGatewayMethod(httpMethod, concrete, WITHOUT_CORS);
  });
  expect(keys).toEqual(authenticatedMethods().map((key) => ({ key, authenticated: true })));
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
  expect(apiGatewayMethod('PUT', `/special-events/${randomUUID()}`, WITHOUT_CORS)).toEqual({
    key: 'ANY /special-events/{eventId}',
    authenticated: false,
  });
  expect(apiGatewayMethod('OPTIONS', `/special-events/${randomUUID()}`, WITHOUT_CORS)).toEqual({
    key: 'OPTIONS /special-events/{eventId}',
    authenticated: false,
  });
  const throttling = new MethodThrottling(ONE_EACH, WITHOUT_CORS);
  expect(throttling.admit('PUT', `/special-events/${randomUUID()}`)).toBe(true);
  expect(throttling.admit('PUT', `/special-events/${randomUUID()}`)).toBe(false);
});

test('the documents are methods of their own resources: GET, HEAD, OPTIONS, and ANY for the rest', () => {
  expect(apiGatewayMethod('GET', '', WITHOUT_CORS)).toEqual({ key: 'GET ', authenticated: false });
  expect(apiGatewayMethod('HEAD', '/openapi.json', WITHOUT_CORS)).toEqual({ key: 'HEAD /openapi.json', authenticated: false });
  expect(apiGatewayMethod('DELETE', '/openapi.json', WITHOUT_CORS)).toEqual({ key: 'ANY /openapi.json', authenticated: false });
});

test('with CORS on, every unknown path shares the bucket of the /{proxy+} method that answers it', () => {
  const throttling = new MethodThrottling(ONE_EACH, WITH_CORS);
  expect(apiGatewayMethod('GET', `/${randomUUID()}/a`, WITH_CORS)).toEqual({ key: `ANY ${UNKNOWN_PATH_RESOURCE}`, authenticated: false });
  expect(apiGatewayMethod('OPTIONS', `/${randomUUID()}`, WITH_CORS)).toEqual({
    key: `OPTIONS ${UNKNOWN_PATH_RESOURCE}`,
    authenticated: false,
  });
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
