// The parts of API Gateway's proxy and authorizer events the local gateway builds from a Node
// request: headers as API Gateway passes them, the body, the query and the request context.
import type { IncomingMessage } from 'node:http';
import { randomBytes, randomUUID } from 'node:crypto';
import type { APIGatewayAuthorizerResult, APIGatewayProxyResult } from 'aws-lambda';
import { headerKey, headerLines, withoutHeaders } from '../../functions/http/header-lookup.ts';
import { BASE_PATH, type Route } from '../../functions/routes.ts';
import { AUTHORIZER_IDENTITY } from '../../functions/unrouted-functions.ts';
import { LOCAL_ACCOUNT } from './lambda-context.ts';

export const API_ID = 'localapi';
export const STAGE = 'local';

const STRICT_UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** The body as API Gateway passes it: text when it is UTF-8, otherwise base64 (so no byte is lost or replaced). */
export function eventBody(body: Buffer): { body: string | null; isBase64Encoded: boolean } {
  if (body.length === 0) return { body: null, isBase64Encoded: false };
  try {
    return { body: STRICT_UTF8.decode(body), isBase64Encoded: false };
  } catch {
    return { body: body.toString('base64'), isBase64Encoded: true };
  }
}

/** A request's header lines, name as sent and value, in order. */
export type HeaderLines = readonly (readonly [string, string])[];

/** X-Amzn-Trace-Id's root: `1-` the epoch seconds in hex `-` 96 random bits (https://docs.aws.amazon.com/xray/latest/devguide/xray-concepts.html#xray-concepts-tracingheader). */
function traceRoot(): string {
  return `Root=1-${Math.floor(Date.now() / 1000).toString(16)}-${randomBytes(12).toString('hex')}`;
}

/**
 * The header lines API Gateway passes to the authorizer and the integration: the client's, with
 * X-Forwarded-For (the client's own list, if any, then the address the request came from),
 * X-Forwarded-Port and X-Forwarded-Proto of the connection the client opened, and, with tracing
 * on, X-Amzn-Trace-Id (the client's, or a new trace). Captured events: the sample events in
 * https://docs.aws.amazon.com/apigateway/latest/developerguide/set-up-lambda-proxy-integrations.html
 * and https://docs.aws.amazon.com/apigateway/latest/developerguide/api-gateway-lambda-authorizer-input.html.
 * Locally the connection is plain HTTP on the local port, so Proto is `http`, not `https`.
 */
export function gatewayHeaderLines(request: IncomingMessage, tracingEnabled: boolean): HeaderLines {
  const lines: [string, string][] = [];
  const forwardedFor: string[] = [];
  let traceId: string | undefined;
  for (let i = 0; i < request.rawHeaders.length; i += 2) {
    const name = request.rawHeaders[i] as string;
    const value = request.rawHeaders[i + 1] as string;
    const lower = name.toLowerCase();
    if (lower === 'x-forwarded-for') forwardedFor.push(value);
    else if (lower === 'x-forwarded-port' || lower === 'x-forwarded-proto') continue;
    else if (lower === 'x-amzn-trace-id' && tracingEnabled) traceId = value;
    else lines.push([name, value]);
  }
  forwardedFor.push(request.socket.remoteAddress ?? '127.0.0.1');
  lines.push(['X-Forwarded-For', forwardedFor.join(', ')]);
  lines.push(['X-Forwarded-Port', String(request.socket.localPort ?? '')]);
  lines.push(['X-Forwarded-Proto', 'http']);
  if (tracingEnabled) lines.push(['X-Amzn-Trace-Id', traceId ?? traceRoot()]);
  return lines;
}

/** Header names as the client sent them; for repeated headers the last value (as API Gateway does). */
export function singleValueHeaders(lines: HeaderLines): Record<string, string> {
  return Object.fromEntries(new Map(lines));
}

const IDENTITY_HEADER = AUTHORIZER_IDENTITY.header.toLowerCase();

/** The authorizer's identity source as deployed: the last line of its header, whatever its case. */
export function identitySource(request: Pick<IncomingMessage, 'rawHeaders'>): string | undefined {
  return headerLines(request.rawHeaders, IDENTITY_HEADER).at(-1);
}

export function withoutAuthorization<T>(headers: Record<string, T>): Record<string, T> {
  return withoutHeaders(headers, [IDENTITY_HEADER]);
}

export function multiValueHeaders(lines: HeaderLines): Record<string, string[]> {
  return groupPairs(lines);
}

/**
 * The query string parameters as API Gateway passes them: a raw `;` separates parameters as `&`
 * does ("The semicolon character (;) is not supported for any request URL query string and results
 * in the data being split": https://docs.aws.amazon.com/apigateway/latest/developerguide/api-gateway-known-issues.html);
 * `%3B` is a semicolon in a value. A repeated name keeps its last value in `queryStringParameters`
 * and every value in `multiValueQueryStringParameters`; both are null without parameters.
 */
export function queryParameters(url: URL): {
  queryStringParameters: Record<string, string> | null;
  multiValueQueryStringParameters: Record<string, string[]> | null;
} {
  const parameters = new URLSearchParams(url.search.slice(1).replaceAll(';', '&'));
  if (parameters.size === 0) return { queryStringParameters: null, multiValueQueryStringParameters: null };
  return { queryStringParameters: Object.fromEntries(new Map(parameters)), multiValueQueryStringParameters: groupPairs(parameters) };
}

// Grouped in a Map, not a plain object: names come from the client, and `__proto__` or
// `constructor` would otherwise find Object.prototype's members (a query `?__proto__=1` was a 502).
function groupPairs(pairs: Iterable<readonly [string, string]>): Record<string, string[]> {
  const grouped = new Map<string, string[]>();
  for (const [name, value] of pairs) {
    const values = grouped.get(name);
    if (values) values.push(value);
    else grouped.set(name, [value]);
  }
  return Object.fromEntries(grouped);
}

/** A request as the gateway routed it: what its authorizer and proxy events are built from. */
export interface RoutedRequest {
  request: IncomingMessage;
  route: Route;
  /** The method it is routed as (X-HTTP-Method-Override's, when present). */
  method: string;
  /** The path below the base path, as requested (a trailing slash kept). */
  path: string;
  pathParameters: Record<string, string>;
  /** The header lines API Gateway passes on (gatewayHeaderLines). */
  headers: HeaderLines;
  /** The query as API Gateway passes it (queryParameters). */
  query: ReturnType<typeof queryParameters>;
}

export function requestContext(request: IncomingMessage, route: Route, method: string, path: string) {
  return {
    accountId: LOCAL_ACCOUNT,
    apiId: API_ID,
    stage: STAGE,
    requestId: randomUUID(),
    // The request's own method: HEAD reaches the GET route's function as HEAD, as deployed.
    httpMethod: method,
    resourcePath: route.path,
    resourceId: route.operationId,
    // What the client requested, base path included (as behind a custom domain's base path mapping).
    path: `${BASE_PATH}${path}`,
    protocol: `HTTP/${request.httpVersion}`,
    requestTimeEpoch: Date.now(),
    identity: { sourceIp: request.socket.remoteAddress ?? '127.0.0.1', userAgent: request.headers['user-agent'] ?? null },
  };
}

/**
 * The method API Gateway routes a request as: the last X-HTTP-Method-Override, when present
 * (known-issues page). `rawHeaders`: names and values alternating, as Node's `rawHeaders`.
 */
export function methodOverride(rawHeaders: readonly string[]): string | undefined {
  return headerLines(rawHeaders, 'x-http-method-override').at(-1)?.trim() || undefined;
}

/**
 * The authorizer's context as the integration receives it: `principalId` and every value
 * stringified; undefined when a value is an object or array, which API Gateway refuses
 * (https://docs.aws.amazon.com/apigateway/latest/developerguide/api-gateway-lambda-authorizer-output.html).
 */
export function authorizerContext(result: APIGatewayAuthorizerResult): Record<string, string> | undefined {
  const context: Record<string, string> = { principalId: result.principalId };
  for (const [name, value] of Object.entries(result.context ?? {})) {
    if (value === null || value === undefined) continue;
    if (typeof value === 'object') return undefined;
    context[name] = String(value);
  }
  return context;
}

/**
 * A proxy integration's headers as API Gateway sends them: the handler's, and `Content-Type:
 * application/json` where the handler set none, as API Gateway adds to every integration response
 * (https://docs.aws.amazon.com/apigateway/latest/developerguide/api-gateway-known-issues.html).
 */
export function integrationHeaders(result: APIGatewayProxyResult): Record<string, string | string[]> {
  const headers: Record<string, string | string[]> = Object.fromEntries(
    Object.entries(result.headers ?? {}).map(([name, value]) => [name, String(value)]),
  );
  for (const [name, values] of Object.entries(result.multiValueHeaders ?? {})) headers[name] = values.map(String);
  if (headerKey(headers, 'content-type') === undefined) headers['Content-Type'] = 'application/json';
  return headers;
}
