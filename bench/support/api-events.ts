// API Gateway events as the deployed REST API (and the local gateway) hands them to the
// functions, so the benchmark can invoke the bundles directly, without HTTP.
import { randomUUID } from 'node:crypto';
import type { APIGatewayProxyEvent, APIGatewayRequestAuthorizerEvent, Context } from 'aws-lambda';
import { BASE_PATH, routes, type Route } from '../../functions/routes.ts';
import { lambdaContext as localLambdaContext } from '../../lib/local/lambda-context.ts';

export const BENCH_PRINCIPAL = 'bench-editor';

export function basicAuthorization(username: string, password: string): string {
  return `Basic ${Buffer.from(`${username}:${password}`).toString('base64')}`;
}

export function routeFor(operationId: string): Route {
  const route = routes.find((candidate) => candidate.operationId === operationId);
  if (!route) throw new Error(`No route ${operationId}`);
  return route;
}

interface ProxyEventOptions {
  eventId?: string;
  query?: Record<string, string>;
  body?: unknown;
  headers?: Record<string, string>;
}

/** A Lambda proxy event for `operationId`, already authorised as an editor. */
export function proxyEvent(operationId: string, options: ProxyEventOptions = {}): APIGatewayProxyEvent {
  const route = routeFor(operationId);
  const path = route.path.replace('{eventId}', options.eventId ?? '');
  const headers: Record<string, string> = {
    Host: 'api.example.com',
    'User-Agent': 'museum-bench',
    Authorization: basicAuthorization(BENCH_PRINCIPAL, 'not-checked-by-handlers'),
    ...(options.body === undefined ? {} : { 'Content-Type': 'application/json' }),
    ...options.headers,
  };
  const query = options.query && Object.keys(options.query).length > 0 ? options.query : null;
  return {
    resource: route.path,
    path,
    httpMethod: route.method,
    headers,
    multiValueHeaders: Object.fromEntries(Object.entries(headers).map(([name, value]) => [name, [value]])),
    queryStringParameters: query,
    multiValueQueryStringParameters: query ? Object.fromEntries(Object.entries(query).map(([name, value]) => [name, [value]])) : null,
    pathParameters: options.eventId === undefined ? null : { eventId: options.eventId },
    stageVariables: null,
    body: options.body === undefined ? null : JSON.stringify(options.body),
    isBase64Encoded: false,
    requestContext: {
      accountId: '000000000000',
      apiId: 'benchapi',
      stage: 'bench',
      requestId: randomUUID(),
      httpMethod: route.method,
      resourcePath: route.path,
      resourceId: route.operationId,
      path: `${BASE_PATH}${path}`,
      protocol: 'HTTP/1.1',
      requestTimeEpoch: Date.now(),
      identity: { sourceIp: '127.0.0.1', userAgent: 'museum-bench' },
      authorizer: { principalId: BENCH_PRINCIPAL, username: BENCH_PRINCIPAL, role: 'editor' },
    },
  } as unknown as APIGatewayProxyEvent;
}

/** The REQUEST authorizer event for a GET of the event list with `authorization`. */
export function authorizerEvent(authorization: string): APIGatewayRequestAuthorizerEvent {
  const route = routeFor('listSpecialEvents');
  return {
    type: 'REQUEST',
    methodArn: `arn:aws:execute-api:local:000000000000:benchapi/bench/${route.method}${route.path}`,
    resource: route.path,
    path: route.path,
    httpMethod: route.method,
    headers: { Authorization: authorization },
    multiValueHeaders: { Authorization: [authorization] },
    pathParameters: null,
    queryStringParameters: null,
    multiValueQueryStringParameters: null,
    stageVariables: null,
    requestContext: {},
  } as unknown as APIGatewayRequestAuthorizerEvent;
}

/** A Lambda context like the runtime's, for a function of the given kind. */
export function lambdaContext(functionName: string, kind: 'handler' | 'authorizer' = 'handler'): Context {
  return localLambdaContext(functionName, kind, 'bench');
}
