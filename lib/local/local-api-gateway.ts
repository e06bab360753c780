// A local stand-in for API Gateway (REST API, Lambda proxy integration, REQUEST authorizer).
// It turns each HTTP request into the same event API Gateway would send, runs the authorizer
// bundle with API Gateway's caching and policy evaluation, then runs the handler bundle: the very
// files that are deployed. Only the gateway is emulated; no handler code differs.
import { randomUUID } from 'node:crypto';
import { createServer, STATUS_CODES, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type {
  APIGatewayAuthorizerResult,
  APIGatewayProxyEvent,
  APIGatewayProxyResult,
  APIGatewayRequestAuthorizerEvent,
  Context,
} from 'aws-lambda';
import { GATEWAY_RESPONSE_HEADERS, gatewayResponse, methodNotAllowedResponse, type GatewayResponseType } from '../../functions/shared/gateway-responses.ts';
import { AUTHORIZER_HANDLER, BASE_PATH, FUNCTION_SETTINGS, matchRoute, type Route } from '../../functions/shared/routes.ts';
import { corsHeaders, DOCUMENT_METHODS, documentAnswer, optionsAnswer, unknownPathPreflight } from './gateway-http-semantics.ts';
import { PUBLIC_DOCUMENT_PATHS, publicDocuments } from '../openapi/public-documents.ts';
import { serviceIndex, serviceIndexHeaders } from '../openapi/service-index.ts';
import { lambdaContext, LOCAL_ACCOUNT, LOCAL_REGION } from './lambda-context.ts';

type LambdaHandler<E, R> = (event: E, context: Context) => Promise<R>;

export interface LocalApiGatewayOptions {
  /** Port on 127.0.0.1 (0: any free one); ignored when `server` is given. */
  port?: number;
  /** A server already listening (listenOnLoopback()), so that the port is taken before anything else starts. */
  server?: Server;
  /** Where `npm run build` put the bundles. */
  functionsDirectory?: string;
  /** API Gateway's authorizer result cache TTL (the deployed default is 300 s; 0 disables it). */
  authorizerCacheTtlSeconds?: number;
  /** Browser origins allowed by CORS (the deployed stack takes them from context). */
  corsAllowedOrigins?: string[];
  /** Called once per request; defaults to a JSON line on stdout. */
  accessLog?: (entry: AccessLogEntry) => void;
}

/** What the access log says of a request: never headers (Authorization), query strings or bodies. */
export interface AccessLogEntry {
  method: string;
  path: string;
  status: number;
  durationMs: number;
  /** The authorizer's principal, when the request got that far. */
  user?: string;
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

/** A finished answer thrown from deep in the request handling (405, 400 for an unusable target). */
class GatewayAnswer extends Error {
  readonly answer: { statusCode: number; headers: Record<string, string>; body: unknown };
  constructor(answer: GatewayAnswer['answer']) {
    super(String(answer.statusCode));
    this.answer = answer;
  }
}

/**
 * A problem for what Node's HTTP parser or the gateway refuses before any route is known. These
 * say nothing specific to this API, so they use `about:blank` and the status phrase (RFC 9457 4.2.1).
 */
function plainProblem(status: number, detail: string) {
  return { statusCode: status, headers: { ...GATEWAY_RESPONSE_HEADERS }, body: { type: 'about:blank', title: STATUS_CODES[status] ?? 'Error', status, detail } };
}

const STRICT_UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** The body as API Gateway passes it: text when it is UTF-8, otherwise base64 (so no byte is lost or replaced). */
function eventBody(body: Buffer): { body: string | null; isBase64Encoded: boolean } {
  if (body.length === 0) return { body: null, isBase64Encoded: false };
  try {
    return { body: STRICT_UTF8.decode(body), isBase64Encoded: false };
  } catch {
    return { body: body.toString('base64'), isBase64Encoded: true };
  }
}

const DOT_SEGMENT = /^(?:\.|%2e){1,2}$/i;

/**
 * The path and query of a request target. Built from the raw target with a fixed origin, so a
 * target such as `//evil.example/v1.1/x` stays a path (it is never read as a host); the
 * absolute form (`http://host/path`, which HTTP/1.1 servers must accept) keeps only its path.
 */
function parseTarget(target: string): URL {
  // A dot-segment (`.`, `..`, or either percent-encoded) names no resource of this API. The URL
  // parser would resolve it (`/v1.1/special-events/..` -> `/v1.1/`) into some other resource.
  if (target.split('?', 1)[0]?.split('/').some((segment) => DOT_SEGMENT.test(segment))) throw new GatewayError('MISSING_AUTHENTICATION_TOKEN');
  try {
    if (target.startsWith('/')) return new URL(`http://gateway.invalid${target}`);
    if (/^https?:\/\//i.test(target)) {
      const absolute = new URL(target);
      return new URL(`http://gateway.invalid${absolute.pathname}${absolute.search}`);
    }
  } catch {
    // answered below
  }
  throw new GatewayAnswer(plainProblem(400, 'The request target is not a path'));
}

/** Parser errors Node reports through `clientError`, as status and detail. */
function parserProblem(error: ParserError) {
  switch (error.code) {
    case 'HPE_HEADER_OVERFLOW':
      return plainProblem(431, 'The request line and headers exceed 16 KB');
    case 'HPE_HEADERS_TIMEOUT':
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return plainProblem(408, 'The request did not arrive in time');
    case 'HPE_INVALID_METHOD': {
      const method = /^[A-Z]+(?= )/.exec(error.rawPacket?.toString('latin1', 0, 32) ?? '')?.[0];
      return method
        ? plainProblem(501, `The method ${method} is not implemented by this API`)
        : plainProblem(400, 'The request method is not valid (methods are case-sensitive: GET, POST, PATCH, DELETE, OPTIONS)');
    }
    default:
      return plainProblem(400, 'The request is not valid HTTP/1.1 (request line, header syntax or message framing)');
  }
}

/** Writes a whole response to a socket the HTTP server has given up on, then closes it. */
function writeRawAnswer(socket: Duplex, answer: { statusCode: number; headers: Record<string, string>; body: unknown }) {
  const body = JSON.stringify(answer.body);
  const headers = Object.entries({ ...answer.headers, 'Content-Length': String(Buffer.byteLength(body)), Connection: 'close' })
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('');
  socket.end(`HTTP/1.1 ${answer.statusCode} ${STATUS_CODES[answer.statusCode] ?? ''}\r\n${headers}\r\n${body}`);
}

/** API Gateway's default cap on an authorizer's concurrent invocations here is the function's reserved concurrency. */
const AUTHORIZER_CONCURRENCY = FUNCTION_SETTINGS.authorizer.reservedConcurrency;

/**
 * Binds 127.0.0.1:`port` and answers 503 until startLocalApiGateway() takes over: taking the port
 * first makes a busy port fail fast, before DynamoDB Local starts.
 */
export async function listenOnLoopback(port: number): Promise<Server> {
  const server = createServer(startingUp);
  server.on('clientError', startingUpClientError);
  await new Promise<void>((resolvePromise, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      server.removeListener('error', reject);
      resolvePromise();
    });
  });
  return server;
}

type ParserError = NodeJS.ErrnoException & { rawPacket?: Buffer };

/**
 * Requests Node's parser refuses (oversized or malformed) get a problem, not an empty answer; as in
 * Node's own handler, never a second answer on a socket whose response has begun.
 */
function answerClientError(error: ParserError, socket: Duplex, accessLog?: (entry: AccessLogEntry) => void) {
  if (error.code === 'ECONNRESET' || !socket.writable || (socket as Duplex & { _httpMessage?: ServerResponse })._httpMessage?.headersSent) {
    socket.destroy();
    return;
  }
  const answer = parserProblem(error);
  writeRawAnswer(socket, answer);
  const requestLine = error.rawPacket?.toString('latin1', 0, 256).split('\r\n')[0]?.split(' ') ?? [];
  accessLog?.({ method: requestLine[0]?.slice(0, 16) ?? '', path: logPath(requestLine[1]), status: answer.statusCode, durationMs: 0 });
}

function startingUpClientError(error: ParserError, socket: Duplex) {
  answerClientError(error, socket);
}

function startingUp(_request: IncomingMessage, response: ServerResponse) {
  const { statusCode, headers, body } = plainProblem(503, 'The local API is starting; retry in a moment');
  response.writeHead(statusCode, { ...headers, 'Retry-After': '1' });
  response.end(JSON.stringify(body));
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
  let authorizersInFlight = 0;
  const accessLog = options.accessLog ?? ((entry: AccessLogEntry) => console.log(JSON.stringify(entry)));
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

  async function authorize(request: IncomingMessage, route: Route, method: string, methodArn: string, path: string, pathParameters: Record<string, string>) {
    // The cache key must be the very value the authorizer checks. Node keeps the FIRST of repeated
    // Authorization headers, the authorizer event the LAST: a viewer's header sent before an
    // editor's was cached with the editor's policy. Like API Gateway, use the last one for both.
    const authorization = identitySource(request);
    // The identity source (Authorization) is missing: API Gateway answers 401 without calling the authorizer.
    if (!authorization) throw new GatewayError('UNAUTHORIZED');
    const cached = authorizationCache.get(authorization);
    let result = cached && cached.expiresAt > Date.now() ? cached.result : undefined;
    if (!result) {
      // Over the reserved concurrency Lambda throttles the invocation, and API Gateway answers
      // AUTHORIZER_FAILURE at once: a flood of new (wrong) credentials cannot queue up until
      // everyone's requests time out.
      if (authorizersInFlight >= AUTHORIZER_CONCURRENCY) throw new GatewayError('AUTHORIZER_FAILURE');
      authorizersInFlight++;
      // Freed when the authorizer itself finishes, not when its timeout answers: a timed-out
      // invocation still runs (and still counts, as in Lambda).
      const authorizerFinished = () => void authorizersInFlight--;
      try {
        result = await invoke(authorizer, AUTHORIZER_HANDLER, 'authorizer', {
          type: 'REQUEST',
          methodArn,
          resource: route.path,
          path,
          httpMethod: method,
          headers: { ...withoutAuthorization(singleValueHeaders(request)), Authorization: authorization },
          multiValueHeaders: { ...withoutAuthorization(multiValueHeaders(request)), Authorization: [authorization] },
          pathParameters,
          queryStringParameters: null,
          multiValueQueryStringParameters: null,
          stageVariables: null,
          requestContext: requestContext(request, route, method, path),
        } as unknown as APIGatewayRequestAuthorizerEvent, authorizerFinished);
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

  async function handle(request: IncomingMessage, response: ServerResponse, log: { user?: string }): Promise<number> {
    const url = parseTarget(request.url ?? '');
    const method = request.method ?? 'GET';
    const readOnly = method === 'GET' || method === 'HEAD';
    // The gateway's own answers carry CORS headers; the handlers' carry their own (as deployed).
    const cors = corsHeaders(request, corsOrigins);
    // Browsers ask for it on every page of the origin: an empty answer they may cache, not a 404.
    if (url.pathname === '/favicon.ico' && readOnly) return send(response, 204, { 'Cache-Control': 'public, max-age=86400', ...cors });
    if (url.pathname !== BASE_PATH && !url.pathname.startsWith(`${BASE_PATH}/`)) throw new GatewayError('MISSING_AUTHENTICATION_TOKEN');
    const preflightOfUnknownPath = method === 'OPTIONS' ? unknownPathPreflight(request, corsOrigins) : undefined;
    const path = url.pathname.slice(BASE_PATH.length);

    // The service index, the OpenAPI document and the docs page need no credentials (as on the
    // deployed API): GET and HEAD (with ETag and 304), OPTIONS, and 405 for anything else. With a
    // trailing slash they redirect (relative Location: it holds behind any prefix); `/v1.1/`
    // must, since the index's links are relative to `/v1.1`.
    if (path === '' || PUBLIC_DOCUMENT_PATHS.includes(path as (typeof PUBLIC_DOCUMENT_PATHS)[number])) {
      if (method === 'OPTIONS') return sendAnswer(response, optionsAnswer(request, DOCUMENT_METHODS, corsOrigins));
      if (!readOnly) throw new GatewayAnswer(methodNotAllowedResponse(DOCUMENT_METHODS));
      const document = path === '' ? { statusCode: 200, headers: serviceIndexHeaders(), body: `${JSON.stringify(serviceIndex(), null, 2)}\n` } : await publicDocument(path);
      if (document) {
        const answer = documentAnswer(request, document);
        return sendAnswer(response, { ...answer, headers: { ...answer.headers, ...cors } });
      }
    }
    const withoutSlash = path.replace(/\/$/, '');
    if (readOnly && path.endsWith('/') && (withoutSlash === '' || PUBLIC_DOCUMENT_PATHS.includes(withoutSlash as (typeof PUBLIC_DOCUMENT_PATHS)[number]))) {
      const target = withoutSlash === '' ? BASE_PATH : withoutSlash;
      return send(response, 308, { Location: `../${target.split('/').pop()}`, 'Cache-Control': 'no-cache', ...cors });
    }
    if (method === 'OPTIONS') {
      const methods = matchRoute('OPTIONS', path || '/');
      if (methods.route || methods.allowedMethods.length === 0) {
        if (preflightOfUnknownPath) return sendAnswer(response, preflightOfUnknownPath);
        throw new GatewayError('MISSING_AUTHENTICATION_TOKEN');
      }
      return sendAnswer(response, optionsAnswer(request, methods.allowedMethods, corsOrigins));
    }
    const match = matchRoute(method, path || '/');
    if (!match.route) {
      if (match.allowedMethods.length > 0) throw new GatewayAnswer(methodNotAllowedResponse(match.allowedMethods));
      throw new GatewayError('MISSING_AUTHENTICATION_TOKEN');
    }
    const { route, pathParameters } = match;
    const body = await readBody(request);

    const methodArn = `arn:aws:execute-api:${LOCAL_REGION}:${LOCAL_ACCOUNT}:${API_ID}/${STAGE}/${method}${path}`;
    const authorization = await authorize(request, route, method, methodArn, path, pathParameters);
    log.user = authorization.principalId;
    const event: APIGatewayProxyEvent = {
      resource: route.path,
      path,
      httpMethod: method,
      headers: singleValueHeaders(request),
      multiValueHeaders: multiValueHeaders(request),
      queryStringParameters: url.searchParams.size ? Object.fromEntries(url.searchParams) : null,
      multiValueQueryStringParameters: url.searchParams.size ? groupParameters(url.searchParams) : null,
      pathParameters: Object.keys(pathParameters).length ? pathParameters : null,
      stageVariables: null,
      ...eventBody(body),
      requestContext: {
        ...requestContext(request, route, method, path),
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

  function onRequest(request: IncomingMessage, response: ServerResponse) {
    const started = performance.now();
    const log: { user?: string } = {};
    handle(request, response, log)
      .catch((error: unknown) => {
        let answer;
        if (error instanceof GatewayAnswer) answer = error.answer;
        else {
          if (!(error instanceof GatewayError)) console.error('Local gateway error:', error);
          answer = gatewayResponse(error instanceof GatewayError ? error.type : 'INTEGRATION_FAILURE');
        }
        if (!response.headersSent) {
          response.writeHead(answer.statusCode, { ...answer.headers, ...corsHeaders(request, corsOrigins) });
          response.end(JSON.stringify(answer.body));
        }
        return answer.statusCode;
      })
      .then((status) => {
        accessLog({ method: request.method ?? '', path: logPath(request.url), status, durationMs: Math.round(performance.now() - started), ...log });
      });
  }

  const server = options.server ?? (await listenOnLoopback(options.port ?? 0));
  server.removeListener('request', startingUp);
  server.on('request', onRequest);
  server.removeListener('clientError', startingUpClientError);
  server.on('clientError', (error: ParserError, socket: Duplex) => answerClientError(error, socket, accessLog));
  // This is no proxy: CONNECT (which Node hands over as a raw socket) is not implemented.
  server.on('connect', (request: IncomingMessage, socket: Duplex) => {
    const answer = plainProblem(501, 'This server is not a proxy: CONNECT is not implemented');
    writeRawAnswer(socket, answer);
    accessLog({ method: 'CONNECT', path: logPath(request.url), status: answer.statusCode, durationMs: 0 });
  });
  // Keep-alive connections must not hold a stopping server open.
  server.keepAliveTimeout = 5_000;

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

function sendAnswer(response: ServerResponse, answer: { statusCode: number; headers: Record<string, string>; body?: string | Buffer }): number {
  return send(response, answer.statusCode, answer.headers, answer.body);
}

function send(response: ServerResponse, statusCode: number, headers: Record<string, string>, body?: string | Buffer): number {
  response.writeHead(statusCode, headers);
  response.end(body);
  return statusCode;
}

/**
 * The path of a target for the access log, bounded: never the query string (it may carry anything)
 * nor, for an absolute-form target (`http://user:password@host/...`), its scheme, userinfo or host.
 */
function logPath(target: string | undefined): string {
  let path = '-';
  try {
    if (target?.startsWith('/')) path = new URL(`http://gateway.invalid${target}`).pathname;
    else if (target && /^https?:\/\//i.test(target)) path = new URL(target).pathname;
  } catch {
    // not a URL: logged as '-'
  }
  return path.length > 200 ? `${path.slice(0, 200)}…` : path;
}

/**
 * Runs a Lambda handler with a Lambda-like context and its configured timeout. `finished` is called
 * when the handler itself settles, which may be after the timeout has answered.
 */
async function invoke<E, R>(
  handler: LambdaHandler<E, R>,
  functionName: string,
  kind: keyof typeof FUNCTION_SETTINGS,
  event: E,
  finished: () => void = () => undefined,
): Promise<R> {
  const timeoutSeconds = FUNCTION_SETTINGS[kind].timeoutSeconds;
  const context = lambdaContext(functionName, kind);
  const running = (async () => handler(event, context))();
  void running.then(finished, finished);
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      running,
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

function requestContext(request: IncomingMessage, route: Route, method: string, path: string) {
  return {
    accountId: LOCAL_ACCOUNT,
    apiId: API_ID,
    stage: STAGE,
    requestId: randomUUID(),
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
