// A local stand-in for API Gateway (REST API, Lambda proxy integration, REQUEST authorizer).
// It turns each HTTP request into the same event API Gateway would send, runs the authorizer
// bundle with API Gateway's caching and policy evaluation, then runs the handler bundle: the very
// files that are deployed, each function in Lambda execution environments of its own
// (lambda-runtime.ts). Only the gateway and Lambda are emulated; no handler code differs.
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type {
  APIGatewayAuthorizerResult,
  APIGatewayProxyEvent,
  APIGatewayProxyResult,
} from 'aws-lambda';
import { problemBody } from '../../functions/events/problems.ts';
import { gatewayResponse, GATEWAY_RESPONSE_HEADERS, methodNotAllowedResponse, type GatewayResponseType } from '../../functions/http/gateway-responses.ts';
import { AUTHORIZER_HANDLER, BASE_PATH, FUNCTION_SETTINGS, matchRoute, type Route } from '../../functions/routes.ts';
import { corsHeaders, DOCUMENT_METHODS, documentAnswer, optionsAnswer, unknownPathPreflight } from './gateway-http-semantics.ts';
import { PUBLIC_DOCUMENT_PATHS, publicDocuments } from '../openapi/public-documents.ts';
import { serviceIndex, serviceIndexHeaders } from '../openapi/service-index.ts';
import { AuthorizerEmulator } from './authorizer-emulator.ts';
import { localThrottleLimits, MethodThrottling, type MethodThrottleLimits } from './gateway-throttling.ts';
import { listenOnLoopback, logPath, plainProblem, serve, type AccessLogEntry } from './http-server.ts';
import { LOCAL_ACCOUNT, LOCAL_REGION } from './lambda-context.ts';
import { LambdaFunction, LambdaFunctionError, LambdaThrottledError } from './lambda-runtime.ts';
import {
  API_ID,
  eventBody,
  groupParameters,
  identitySource,
  multiValueHeaders,
  readBody,
  requestContext,
  singleValueHeaders,
  STAGE,
  withoutAuthorization,
} from './proxy-event.ts';
import { parseTarget } from './request-target.ts';
import { sendAnswer as sendCompressed } from './response-compression.ts';

export { listenOnLoopback, type AccessLogEntry };

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
  /** Method throttling (default: the deployed production limits, or MUSEUM_THROTTLE_RATE_LIMIT/BURST_LIMIT). */
  throttleLimits?: MethodThrottleLimits;
}

export interface LocalApiGateway {
  url: string;
  close(): Promise<void>;
}

/** API Gateway's own payload limit for REST APIs. */
const GATEWAY_MAX_BODY_BYTES = 10 * 1024 * 1024;

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

export async function startLocalApiGateway(options: LocalApiGatewayOptions): Promise<LocalApiGateway> {
  const functionsDirectory = resolve(options.functionsDirectory ?? 'dist/functions');
  // Each function in execution environments of its own, started on demand as Lambda does (no
  // pre-warming: on-demand functions start cold), with its deployed settings (lambda-runtime.ts).
  const functions = new Map<string, LambdaFunction>();
  const lambdaFunction = (name: string, kind: keyof typeof FUNCTION_SETTINGS) => {
    let fn = functions.get(name);
    if (!fn) {
      fn = new LambdaFunction({ functionName: name, bundleUrl: pathToFileURL(resolve(functionsDirectory, name, 'index.mjs')).href, settings: FUNCTION_SETTINGS[kind] });
      functions.set(name, fn);
    }
    return fn;
  };
  const authorizerGate = new AuthorizerEmulator(options.authorizerCacheTtlSeconds ?? 300);
  const throttling = new MethodThrottling(options.throttleLimits ?? localThrottleLimits());
  const accessLog = options.accessLog ?? ((entry: AccessLogEntry) => console.log(JSON.stringify(entry)));
  const corsOrigins = new Set(options.corsAllowedOrigins ?? []);
  const publicDocument = publicDocuments();

  async function authorize(request: IncomingMessage, route: Route, method: string, methodArn: string, path: string, pathParameters: Record<string, string>) {
    // The cache key must be the very value the authorizer checks. Node keeps the FIRST of repeated
    // Authorization headers, the authorizer event the LAST: a viewer's header sent before an
    // editor's was cached with the editor's policy. Like API Gateway, use the last one for both.
    const authorization = identitySource(request);
    // The identity source (Authorization) is missing: API Gateway answers 401 without calling the authorizer.
    if (!authorization) throw new GatewayError('UNAUTHORIZED');
    let result = authorizerGate.cached(authorization);
    if (!result) {
      try {
        result = await lambdaFunction(AUTHORIZER_HANDLER, 'authorizer').invoke<APIGatewayAuthorizerResult>({
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
        });
      } catch (error) {
        // The authorizer's own 'Unauthorized' is a 401; anything else (an error, a timeout, or a
        // throttle over its reserved concurrency) is AUTHORIZER_FAILURE, at once: API Gateway
        // neither queues nor retries (supported-gateway-response-types.html).
        if (error instanceof LambdaFunctionError && error.errorMessage === 'Unauthorized') throw new GatewayError('UNAUTHORIZED');
        console.error('Authorizer failed:', error instanceof LambdaFunctionError ? `${error.errorType}: ${error.errorMessage}` : error instanceof Error ? error.message : error);
        throw new GatewayError('AUTHORIZER_FAILURE');
      }
      authorizerGate.remember(authorization, result);
    }
    if (!policyAllows(result, methodArn)) throw new GatewayError('ACCESS_DENIED');
    return result;
  }

  async function handle(request: IncomingMessage, response: ServerResponse, log: { user?: string }): Promise<number> {
    const url = parseTarget(request.url ?? '');
    if (url === 'dot-segment') throw new GatewayError('MISSING_AUTHENTICATION_TOKEN');
    if (url === 'not-a-path') throw new GatewayAnswer(plainProblem(400, 'The request target is not a path'));
    const method = request.method ?? 'GET';
    const readOnly = method === 'GET' || method === 'HEAD';
    // The gateway's own answers carry CORS headers; the handlers' carry their own (as deployed).
    const cors = corsHeaders(request, corsOrigins);
    // Browsers ask for it on every page of the origin: an empty answer they may cache, not a 404.
    if (url.pathname === '/favicon.ico' && readOnly) return send(response, 204, { 'Cache-Control': 'public, max-age=86400', ...cors });
    if (url.pathname !== BASE_PATH && !url.pathname.startsWith(`${BASE_PATH}/`)) throw new GatewayError('MISSING_AUTHENTICATION_TOKEN');
    const preflightOfUnknownPath = method === 'OPTIONS' ? unknownPathPreflight(request, corsOrigins) : undefined;
    const path = url.pathname.slice(BASE_PATH.length);
    // Stage method throttling comes before everything else, the authorizer included (gateway-throttling.ts).
    if (!throttling.admit(method, path)) throw new GatewayError('THROTTLED');

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
    const body = await readBody(request, GATEWAY_MAX_BODY_BYTES, () => new GatewayError('REQUEST_TOO_LARGE'));

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
      result = await lambdaFunction(route.handler, 'handler').invoke<APIGatewayProxyResult>(event);
    } catch (error) {
      // A throttled proxy integration is API Gateway's 500 (https://repost.aws/knowledge-center/api-gateway-internal-server-error,
      // "throttling"; the stack's DEFAULT_5XX); the handlers reserve no concurrency, so only a
      // setting with reservedConcurrency reaches it.
      if (error instanceof LambdaThrottledError) throw new GatewayAnswer(internalServerError());
      console.error(`${route.handler} failed:`, error instanceof LambdaFunctionError ? `${error.errorType}: ${error.errorMessage}` : error instanceof Error ? error.message : error);
      throw new GatewayError('INTEGRATION_FAILURE');
    }
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- the handler is user code: its result may be anything at runtime
    if (!result || typeof result.statusCode !== 'number') throw new GatewayError('INTEGRATION_FAILURE');
    const headers: Record<string, string | string[]> = { ...result.headers } as Record<string, string>;
    for (const [name, values] of Object.entries(result.multiValueHeaders ?? {})) headers[name] = values.map(String);
    // CORS headers on proxy responses are the handler's own (http-cors), as behind API Gateway.
    return send(response, result.statusCode, headers, result.body ? Buffer.from(result.body, result.isBase64Encoded ? 'base64' : 'utf8') : undefined);
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
        if (!response.headersSent) return send(response, answer.statusCode, { ...answer.headers, ...corsHeaders(request, corsOrigins) }, JSON.stringify(answer.body));
        return answer.statusCode;
      })
      .then((status) => {
        accessLog({ method: request.method ?? '', path: logPath(request.url), status, durationMs: Math.round(performance.now() - started), ...log });
      })
      .catch((error: unknown) => {
        // Sending the error answer or writing the access log failed: log it and end the exchange.
        console.error('Local gateway error while answering:', error);
        if (!response.writableEnded) response.destroy();
      });
  }

  const server = options.server ?? (await listenOnLoopback(options.port ?? 0));
  serve(server, onRequest, accessLog);

  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : options.port;
  return {
    url: `http://127.0.0.1:${port}${BASE_PATH}`,
    close: () =>
      new Promise<void>((resolvePromise) => {
        for (const fn of functions.values()) fn.close();
        server.closeAllConnections();
        server.close(() => resolvePromise());
      }),
  };
}

function send(response: ServerResponse, statusCode: number, headers: Record<string, string | string[]>, body?: string | Buffer): Promise<number> {
  return sendCompressed(response, statusCode, headers, body);
}

function sendAnswer(response: ServerResponse, answer: { statusCode: number; headers: Record<string, string>; body?: string | Buffer }): Promise<number> {
  return send(response, answer.statusCode, answer.headers, answer.body);
}

/** The stack's DEFAULT_5XX answer (lib/cdk/problem-gateway-responses.ts), for the one 500 the local gateway gives. */
function internalServerError() {
  return { statusCode: 500, headers: { ...GATEWAY_RESPONSE_HEADERS }, body: problemBody('internal-error', 'The API gateway failed to handle the request; it has been logged') };
}

/** IAM policy evaluation as API Gateway does it for an authorizer result: explicit Deny wins, then any Allow. */
export function policyAllows(result: APIGatewayAuthorizerResult, methodArn: string): boolean {
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- the authorizer is user code: its result may lack a policyDocument at runtime
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
