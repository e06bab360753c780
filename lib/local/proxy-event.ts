// The parts of API Gateway's proxy and authorizer events the local gateway builds from a Node
// request: headers as API Gateway passes them, the body, the query and the request context.
import type { IncomingMessage } from 'node:http';
import { randomUUID } from 'node:crypto';
import { gunzipSync, inflateSync } from 'node:zlib';
import type { APIGatewayAuthorizerResult, APIGatewayProxyResult } from 'aws-lambda';
import { AUTHORIZER_IDENTITY, BASE_PATH, type Route } from '../../functions/routes.ts';
import { MALFORMED_BODY } from './http-server.ts';
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

/** The request body, refused with `tooLarge()` once it passes `maxBytes`, and with `malformed()` when its framing is broken. */
export function readBody(request: IncomingMessage, maxBytes: number, tooLarge: () => Error, malformed: () => Error): Promise<Buffer> {
  return new Promise((resolvePromise, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    request.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) {
        reject(tooLarge());
        request.resume();
        return;
      }
      chunks.push(chunk);
    });
    request.on('end', () => resolvePromise(Buffer.concat(chunks)));
    request.on('error', (error: NodeJS.ErrnoException) => reject(error.code === MALFORMED_BODY ? malformed() : error));
  });
}

/** Header names as the client sent them; for repeated headers the last value (as API Gateway does). */
export function singleValueHeaders(request: IncomingMessage): Record<string, string> {
  const headers = new Map<string, string>();
  for (let i = 0; i < request.rawHeaders.length; i += 2) headers.set(request.rawHeaders[i] as string, request.rawHeaders[i + 1] as string);
  return Object.fromEntries(headers);
}

const IDENTITY_HEADER = AUTHORIZER_IDENTITY.header.toLowerCase();

/** The authorizer's identity source as deployed: the last line of its header, whatever its case. */
export function identitySource(request: Pick<IncomingMessage, 'rawHeaders'>): string | undefined {
  let value: string | undefined;
  for (let i = 0; i < request.rawHeaders.length; i += 2) {
    if ((request.rawHeaders[i] as string).toLowerCase() === IDENTITY_HEADER) value = request.rawHeaders[i + 1];
  }
  return value;
}

export function withoutAuthorization<T>(headers: Record<string, T>): Record<string, T> {
  return Object.fromEntries(Object.entries(headers).filter(([name]) => name.toLowerCase() !== IDENTITY_HEADER));
}

export function multiValueHeaders(request: IncomingMessage): Record<string, string[]> {
  return groupPairs(
    Array.from({ length: request.rawHeaders.length / 2 }, (_, i) => [
      request.rawHeaders[2 * i] as string,
      request.rawHeaders[2 * i + 1] as string,
    ]),
  );
}

export function groupParameters(parameters: URLSearchParams): Record<string, string[]> {
  return groupPairs(parameters);
}

// Grouped in a Map, not a plain object: names come from the client, and `__proto__` or
// `constructor` would otherwise find Object.prototype's members (a query `?__proto__=1` was a 502).
function groupPairs(pairs: Iterable<[string, string]>): Record<string, string[]> {
  const grouped = new Map<string, string[]>();
  for (const [name, value] of pairs) {
    const values = grouped.get(name);
    if (values) values.push(value);
    else grouped.set(name, [value]);
  }
  return Object.fromEntries(grouped);
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

/** The method API Gateway routes a request as: the last X-HTTP-Method-Override, when present (known-issues page). */
export function methodOverride(request: IncomingMessage): string | undefined {
  let value: string | undefined;
  for (let i = 0; i < request.rawHeaders.length; i += 2) {
    if ((request.rawHeaders[i] as string).toLowerCase() === 'x-http-method-override') value = (request.rawHeaders[i + 1] as string).trim();
  }
  return value || undefined;
}

/**
 * A request body as API Gateway passes it on: decoded per its Content-Encoding (gzip, deflate,
 * identity), or refused with 415 when a coding is unsupported or the bytes are not so coded
 * (https://docs.aws.amazon.com/apigateway/latest/developerguide/api-gateway-make-request-with-compressed-payload.html,
 * codings: https://docs.aws.amazon.com/apigateway/latest/developerguide/api-gateway-enable-compression.html).
 * The header itself reaches the handler unchanged.
 */
export function decodeContentCoding(request: IncomingMessage, body: Buffer, unsupported: () => Error): Buffer {
  const codings: string[] = [];
  for (let i = 0; i < request.rawHeaders.length; i += 2) {
    if ((request.rawHeaders[i] as string).toLowerCase() !== 'content-encoding') continue;
    codings.push(
      ...(request.rawHeaders[i + 1] as string)
        .split(',')
        .map((coding) => coding.trim().toLowerCase())
        .filter(Boolean),
    );
  }
  let decoded = body;
  if (body.length === 0) return body; // nothing to decode
  try {
    for (const coding of codings.reverse()) {
      if (coding === 'gzip') decoded = gunzipSync(decoded);
      else if (coding === 'deflate') decoded = inflateSync(decoded);
      else if (coding !== 'identity') throw unsupported();
    }
  } catch {
    throw unsupported();
  }
  return decoded;
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
  if (!Object.keys(headers).some((name) => name.toLowerCase() === 'content-type')) headers['Content-Type'] = 'application/json';
  return headers;
}
