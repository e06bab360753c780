// A local stand-in for API Gateway (REST API, Lambda proxy integration, REQUEST authorizer).
// It turns each HTTP request into the same event API Gateway would send, runs the authorizer
// bundle with API Gateway's caching and policy evaluation, then runs the handler bundle: the very
// files that are deployed. Only the gateway is emulated; no handler code differs.
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type {
  APIGatewayAuthorizerResult,
  APIGatewayProxyEvent,
  APIGatewayProxyResult,
  APIGatewayRequestAuthorizerEvent,
  Context,
} from 'aws-lambda';
import { gatewayResponse, type GatewayResponseType } from '../../functions/shared/gateway-responses.ts';
import { AUTHORIZER_HANDLER, BASE_PATH, CORS_REQUEST_HEADERS, FUNCTION_SETTINGS, matchRoute, type Route } from '../../functions/shared/routes.ts';
import { publicDocuments } from '../openapi/public-documents.ts';
import { lambdaContext, LOCAL_ACCOUNT, LOCAL_REGION } from './lambda-context.ts';

type LambdaHandler<E, R> = (event: E, context: Context) => Promise<R>;

export interface LocalApiGatewayOptions {
  port: number;
  /** Where `npm run build` put the bundles. */
  functionsDirectory?: string;
  /** API Gateway's authorizer result cache TTL (the deployed default is 300 s; 0 disables it). */
  authorizerCacheTtlSeconds?: number;
  /** Browser origins allowed by CORS (the deployed stack takes them from context). */
  corsAllowedOrigins?: string[];
  /** One line per request; defaults to stdout. */
  accessLog?: (line: string) => void;
}

export interface LocalApiGateway {
  url: string;
  close(): Promise<void>;
}

/** API Gateway's own payload limit for REST APIs. */
const GATEWAY_MAX_BODY_BYTES = 10 * 1024 * 1024;
const API_ID = 'localapi';
const STAGE = 'local';

interface CachedAuthorization {
  result: APIGatewayAuthorizerResult;
  expiresAt: number;
}

class GatewayError extends Error {
  readonly type: GatewayResponseType;
  constructor(type: GatewayResponseType) {
    super(type);
    this.type = type;
  }
}

export async function startLocalApiGateway(options: LocalApiGatewayOptions): Promise<LocalApiGateway> {
  const functionsDirectory = resolve(options.functionsDirectory ?? 'dist/functions');
  const load = async <E, R>(name: string) =>
    ((await import(pathToFileURL(resolve(functionsDirectory, name, 'index.mjs')).href)) as { handler: LambdaHandler<E, R> })
      .handler;
  const authorizer = await load<APIGatewayRequestAuthorizerEvent, APIGatewayAuthorizerResult>(AUTHORIZER_HANDLER);
  const handlers = new Map<string, LambdaHandler<APIGatewayProxyEvent, APIGatewayProxyResult>>();
  const cacheTtlMs = (options.authorizerCacheTtlSeconds ?? 300) * 1000;
  const authorizationCache = new Map<string, CachedAuthorization>();
  const accessLog = options.accessLog ?? ((line: string) => console.log(line));
  const corsOrigins = new Set(options.corsAllowedOrigins ?? []);
  const publicDocument = publicDocuments();

  async function handlerFor(route: Route) {
    let handler = handlers.get(route.handler);
    if (!handler) {
      handler = await load<APIGatewayProxyEvent, APIGatewayProxyResult>(route.handler);
      handlers.set(route.handler, handler);
    }
    return handler;
  }

  async function authorize(request: IncomingMessage, route: Route, methodArn: string, path: string, pathParameters: Record<string, string>) {
    // The cache key must be the very value the authorizer checks. Node keeps the FIRST of repeated
    // Authorization headers, the authorizer event the LAST: a viewer's header sent before an
    // editor's was cached with the editor's policy. Like API Gateway, use the last one for both.
    const authorization = identitySource(request);
    // The identity source (Authorization) is missing: API Gateway answers 401 without calling the authorizer.
    if (!authorization) throw new GatewayError('UNAUTHORIZED');
    const cached = authorizationCache.get(authorization);
    let result = cached && cached.expiresAt > Date.now() ? cached.result : undefined;
    if (!result) {
      try {
        result = await invoke(authorizer, AUTHORIZER_HANDLER, 'authorizer', {
          type: 'REQUEST',
          methodArn,
          resource: route.path,
          path,
          httpMethod: route.method,
          headers: { ...withoutAuthorization(singleValueHeaders(request)), Authorization: authorization },
          multiValueHeaders: { ...withoutAuthorization(multiValueHeaders(request)), Authorization: [authorization] },
          pathParameters,
          queryStringParameters: null,
          multiValueQueryStringParameters: null,
          stageVariables: null,
          requestContext: requestContext(request, route, path),
        } as unknown as APIGatewayRequestAuthorizerEvent);
      } catch (error) {
        if (error instanceof Error && error.message === 'Unauthorized') throw new GatewayError('UNAUTHORIZED');
        console.error('Authorizer failed:', error instanceof Error ? error.message : error);
        throw new GatewayError('AUTHORIZER_FAILURE');
      }
      if (cacheTtlMs > 0) authorizationCache.set(authorization, { result, expiresAt: Date.now() + cacheTtlMs });
    }
    if (!policyAllows(result, methodArn)) throw new GatewayError('ACCESS_DENIED');
    return result;
  }

  async function handle(request: IncomingMessage, response: ServerResponse): Promise<number> {
    const url = new URL(request.url ?? '/', 'http://localhost');
    const method = request.method ?? 'GET';
    if (url.pathname !== BASE_PATH && !url.pathname.startsWith(`${BASE_PATH}/`)) throw new GatewayError('MISSING_AUTHENTICATION_TOKEN');
    const path = url.pathname.slice(BASE_PATH.length) || '/';

    // The OpenAPI document and the docs page need no credentials (as on the deployed API).
    const document = method === 'GET' ? await publicDocument(path) : undefined;
    if (document) {
      response.writeHead(document.statusCode, document.headers);
      response.end(document.body);
      return document.statusCode;
    }
    if (method === 'OPTIONS') return preflight(request, response, path);
    const match = matchRoute(method, path);
    if (!match.route) throw new GatewayError('MISSING_AUTHENTICATION_TOKEN');
    const { route, pathParameters } = match;
    const body = await readBody(request);

    const methodArn = `arn:aws:execute-api:${LOCAL_REGION}:${LOCAL_ACCOUNT}:${API_ID}/${STAGE}/${route.method}${path}`;
    const authorization = await authorize(request, route, methodArn, path, pathParameters);
    const event: APIGatewayProxyEvent = {
      resource: route.path,
      path,
      httpMethod: route.method,
      headers: singleValueHeaders(request),
      multiValueHeaders: multiValueHeaders(request),
      queryStringParameters: url.searchParams.size ? Object.fromEntries(url.searchParams) : null,
      multiValueQueryStringParameters: url.searchParams.size ? groupParameters(url.searchParams) : null,
      pathParameters: Object.keys(pathParameters).length ? pathParameters : null,
      stageVariables: null,
      body: body.length ? body.toString('utf8') : null,
      isBase64Encoded: false,
      requestContext: {
        ...requestContext(request, route, path),
        authorizer: { principalId: authorization.principalId, ...authorization.context },
      },
    } as unknown as APIGatewayProxyEvent;

    let result: APIGatewayProxyResult;
    try {
      result = await invoke(await handlerFor(route), route.handler, 'handler', event);
    } catch (error) {
      console.error(`${route.handler} failed:`, error instanceof Error ? error.message : error);
      throw new GatewayError('INTEGRATION_FAILURE');
    }
    if (!result || typeof result.statusCode !== 'number') throw new GatewayError('INTEGRATION_FAILURE');
    const headers: Record<string, string | string[]> = { ...result.headers } as Record<string, string>;
    for (const [name, values] of Object.entries(result.multiValueHeaders ?? {})) headers[name] = values.map(String);
    // CORS headers on proxy responses are the handler's own (http-cors), as behind API Gateway.
    response.writeHead(result.statusCode, headers);
    response.end(result.body ? Buffer.from(result.body, result.isBase64Encoded ? 'base64' : 'utf8') : undefined);
    return result.statusCode;
  }

  function corsHeaders(request: IncomingMessage): Record<string, string> {
    const origin = request.headers.origin;
    return origin && corsOrigins.has(origin) ? { 'Access-Control-Allow-Origin': origin, Vary: 'Origin' } : {};
  }

  /** CORS preflight, answered by the gateway without authorization as the deployed OPTIONS methods are. */
  function preflight(request: IncomingMessage, response: ServerResponse, path: string): number {
    if (!matchRoute('GET', path).route && !matchRoute('PATCH', path).route && !matchRoute('POST', path).route) {
      throw new GatewayError('MISSING_AUTHENTICATION_TOKEN');
    }
    const cors = corsHeaders(request);
    response.writeHead(204, {
      ...cors,
      ...(cors['Access-Control-Allow-Origin']
        ? {
            'Access-Control-Allow-Methods': 'GET,POST,PATCH,DELETE,OPTIONS',
            'Access-Control-Allow-Headers': CORS_REQUEST_HEADERS,
            'Access-Control-Max-Age': '600',
          }
        : {}),
    });
    response.end();
    return 204;
  }

  const server: Server = createServer((request, response) => {
    const started = performance.now();
    handle(request, response)
      .catch((error: unknown) => {
        const type: GatewayResponseType = error instanceof GatewayError ? error.type : 'INTEGRATION_FAILURE';
        if (!(error instanceof GatewayError)) console.error('Local gateway error:', error);
        const { statusCode, headers, body } = gatewayResponse(type);
        if (!response.headersSent) {
          response.writeHead(statusCode, { ...headers, ...corsHeaders(request) });
          response.end(JSON.stringify(body));
        }
        return statusCode;
      })
      .then((status) => {
        // Method, path and status only: never headers (Authorization) or bodies.
        accessLog(`${request.method} ${(request.url ?? '').split('?')[0]} ${status} ${Math.round(performance.now() - started)}ms`);
      });
  });
  // Keep-alive connections must not hold a stopping server open.
  server.keepAliveTimeout = 5_000;

  await new Promise<void>((resolvePromise, reject) => {
    server.once('error', reject);
    server.listen(options.port, '127.0.0.1', () => resolvePromise());
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : options.port;
  return {
    url: `http://127.0.0.1:${port}${BASE_PATH}`,
    close: () =>
      new Promise<void>((resolvePromise) => {
        server.closeAllConnections();
        server.close(() => resolvePromise());
      }),
  };
}

/** Runs a Lambda handler with a Lambda-like context and its configured timeout. */
async function invoke<E, R>(handler: LambdaHandler<E, R>, functionName: string, kind: keyof typeof FUNCTION_SETTINGS, event: E): Promise<R> {
  const timeoutSeconds = FUNCTION_SETTINGS[kind].timeoutSeconds;
  const context = lambdaContext(functionName, kind);
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      handler(event, context),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`Task timed out after ${timeoutSeconds} seconds`)), timeoutSeconds * 1000);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** IAM policy evaluation as API Gateway does it for an authorizer result: explicit Deny wins, then any Allow. */
export function policyAllows(result: APIGatewayAuthorizerResult, methodArn: string): boolean {
  const statements = result.policyDocument?.Statement ?? [];
  const matches = (statement: (typeof statements)[number]) => {
    const actions = [(statement as { Action?: string | string[] }).Action ?? []].flat();
    const resources = [(statement as { Resource?: string | string[] }).Resource ?? []].flat();
    return (
      actions.some((action) => ['execute-api:Invoke', 'execute-api:*', '*'].includes(action)) &&
      resources.some((resource) => arnPattern(resource).test(methodArn))
    );
  };
  if (statements.some((s) => s.Effect === 'Deny' && matches(s))) return false;
  return statements.some((s) => s.Effect === 'Allow' && matches(s));
}

function arnPattern(resource: string): RegExp {
  const escaped = resource.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*').replace(/\?/g, '.');
  return new RegExp(`^${escaped}$`);
}

function readBody(request: IncomingMessage): Promise<Buffer> {
  return new Promise((resolvePromise, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    request.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > GATEWAY_MAX_BODY_BYTES) {
        reject(new GatewayError('REQUEST_TOO_LARGE'));
        request.resume();
        return;
      }
      chunks.push(chunk);
    });
    request.on('end', () => resolvePromise(Buffer.concat(chunks)));
    request.on('error', reject);
  });
}

/** Header names as the client sent them; for repeated headers the last value (as API Gateway does). */
function singleValueHeaders(request: IncomingMessage): Record<string, string> {
  const headers = new Map<string, string>();
  for (let i = 0; i < request.rawHeaders.length; i += 2) headers.set(request.rawHeaders[i] as string, request.rawHeaders[i + 1] as string);
  return Object.fromEntries(headers);
}

/** The last Authorization header, whatever its case. */
function identitySource(request: IncomingMessage): string | undefined {
  let value: string | undefined;
  for (let i = 0; i < request.rawHeaders.length; i += 2) {
    if ((request.rawHeaders[i] as string).toLowerCase() === 'authorization') value = request.rawHeaders[i + 1];
  }
  return value;
}

function withoutAuthorization<T>(headers: Record<string, T>): Record<string, T> {
  return Object.fromEntries(Object.entries(headers).filter(([name]) => name.toLowerCase() !== 'authorization'));
}

function multiValueHeaders(request: IncomingMessage): Record<string, string[]> {
  return groupPairs(Array.from({ length: request.rawHeaders.length / 2 }, (_, i) => [request.rawHeaders[2 * i] as string, request.rawHeaders[2 * i + 1] as string]));
}

function groupParameters(parameters: URLSearchParams): Record<string, string[]> {
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

function requestContext(request: IncomingMessage, route: Route, path: string) {
  return {
    accountId: LOCAL_ACCOUNT,
    apiId: API_ID,
    stage: STAGE,
    requestId: randomUUID(),
    httpMethod: route.method,
    resourcePath: route.path,
    resourceId: route.operationId,
    // What the client requested, base path included (as behind a custom domain's base path mapping).
    path: `${BASE_PATH}${path}`,
    protocol: `HTTP/${request.httpVersion}`,
    requestTimeEpoch: Date.now(),
    identity: { sourceIp: request.socket.remoteAddress ?? '127.0.0.1', userAgent: request.headers['user-agent'] ?? null },
  };
}
