// A local stand-in for API Gateway (REST API, Lambda proxy integration, REQUEST authorizer).
// It turns each HTTP request into the same event API Gateway would send, runs the authorizer
// bundle with API Gateway's caching and policy evaluation, then runs the handler bundle: the very
// files that are deployed, each function in Lambda execution environments of its own
// (lambda-runtime.ts). Only the gateway and Lambda are emulated; no handler code differs.
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { APIGatewayAuthorizerResult, APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import {
  PAYLOAD_LIMIT_ANSWER,
  PAYLOAD_LIMIT_BYTES,
  REQUEST_TOO_LARGE_DEFAULT,
  type GatewayResponseType,
} from '../../functions/http/gateway-responses.ts';
import { BASE_PATH, isAuthenticated, routes, type Route } from '../../functions/routes.ts';
import { AUTHORIZER_HANDLER, WEBHOOK_FUNCTIONS } from '../../functions/unrouted-functions.ts';
import { matchRoute } from '../../functions/route-matching.ts';
import { FUNCTION_SETTINGS, STAGE_TRACING_ENABLED } from '../../functions/deployment.ts';
import { gatewayResponses, mockAnswer, templateRequest, type Answer } from './gateway-http-semantics.ts';
import {
  DOCUMENT_METHODS,
  documentAnswer,
  methodNotAllowedAnswer,
  optionsAnswer,
  unknownPathAnswers,
  type MockAnswer,
} from '../openapi/mock-answers.ts';
import { localDocuments, PUBLIC_DOCUMENT_PATHS } from '../openapi/public-documents.ts';
import { AuthorizerStandIn } from './authorizer-stand-in.ts';
import { localThrottleLimits, MethodThrottling, type Throttle } from './gateway-throttling.ts';
import { listenOnLoopback, logPath, plainProblem, serve, type AccessLogEntry } from './http-server.ts';
import { LOCAL_ACCOUNT, LOCAL_REGION } from './lambda-context.ts';
import { LocalLambda, type FunctionConfiguration } from './lambda-runtime.ts';
import { LambdaFunctionError, LambdaThrottledError } from './lambda-errors.ts';
import {
  API_ID,
  authorizerContext,
  eventBody,
  gatewayHeaderLines,
  identitySource,
  integrationHeaders,
  methodOverride,
  multiValueHeaders,
  queryParameters,
  requestContext,
  singleValueHeaders,
  STAGE,
  withoutAuthorization,
  type HeaderLines,
} from './proxy-event.ts';
import { matchedResourcePath, parseTarget } from './request-target.ts';
import { readDecodedBody } from './request-body.ts';
import { sendAnswer as sendCompressed } from './response-compression.ts';

export { listenOnLoopback, type AccessLogEntry };

export interface LocalApiGatewayOptions {
  /** Port on 127.0.0.1 (0: any free one); ignored when `server` is given. */
  port?: number;
  /** A server already listening (listenOnLoopback()), so that the port is taken before anything else starts. */
  server?: Server;
  /** Where `npm run build` put the bundles (for the default `lambda`). */
  functionsDirectory?: string;
  /**
   * The Lambda functions the gateway invokes; by default the stack's (deployedFunctions) from
   * `functionsDirectory`. Fault tests give one of their own (test handlers, other settings).
   */
  lambda?: LocalLambda;
  /** API Gateway's authorizer result cache TTL; by default the deployed one (AUTHORIZER_IDENTITY), 0 disables it. */
  authorizerCacheTtlSeconds?: number;
  /** Browser origins allowed by CORS (the deployed stack takes them from context). */
  corsAllowedOrigins?: string[];
  /** Called once per request; defaults to a JSON line on stdout. */
  accessLog?: (entry: AccessLogEntry) => void;
  /** Each method's throttle (default: the deployed production limits, or MUSEUM_THROTTLE_RATE_LIMIT/BURST_LIMIT). */
  throttleLimits?: Throttle;
}

export interface LocalApiGateway {
  url: string;
  /** Retires the function's environments: its next invocation loads its bundle afresh (after a rebuild). */
  retireEnvironments(functionName: string): void;
  close(): Promise<void>;
}

/** Lambda's invocation payload limit, request and response (https://docs.aws.amazon.com/lambda/latest/dg/gettingstarted-limits.html). */
const LAMBDA_MAX_PAYLOAD_BYTES = 6 * 1024 * 1024;

/** A gateway response of `type`; types the stack does not configure fall to DEFAULT_4XX/5XX with `status` and API Gateway's `message`. */
class GatewayError extends Error {
  readonly type: string;
  readonly status: number;
  constructor(type: GatewayResponseType | 'DEFAULT_5XX', status?: number, message?: string) {
    super(message ?? type);
    this.type = type;
    this.status = status ?? 500;
  }
}

/** A finished answer thrown from deep in the request handling (a MOCK's answer, 400 for an unusable target). */
class GatewayAnswer extends Error {
  readonly answer: Answer;
  constructor(answer: Answer) {
    super(String(answer.statusCode));
    this.answer = answer;
  }
}

export async function startLocalApiGateway(options: LocalApiGatewayOptions): Promise<LocalApiGateway> {
  // Each function in execution environments of its own, started on demand as Lambda does (no
  // pre-warming: on-demand functions start cold), with its deployed settings (lambda-runtime.ts).
  const lambda = options.lambda ?? new LocalLambda({ functions: deployedFunctions(options.functionsDirectory ?? 'dist/functions') });
  const authorizerGate = new AuthorizerStandIn(options.authorizerCacheTtlSeconds);
  const accessLog = options.accessLog ?? ((entry: AccessLogEntry) => console.log(JSON.stringify(entry)));
  const corsOrigins = options.corsAllowedOrigins ?? [];
  const localDocument = localDocuments();
  const gatewayResponse = gatewayResponses(corsOrigins);
  const unknownPath = unknownPathAnswers(corsOrigins);
  const throttling = new MethodThrottling(options.throttleLimits ?? localThrottleLimits(), {
    documentPaths: PUBLIC_DOCUMENT_PATHS,
    unknownPaths: Boolean(unknownPath),
  });
  const documentAnswers = new Map<string, MockAnswer>();

  async function authorize(
    request: IncomingMessage,
    passed: { headers: HeaderLines; query: ReturnType<typeof queryParameters> },
    route: Route,
    method: string,
    methodArn: string,
    path: string,
    pathParameters: Record<string, string>,
  ) {
    // The cache key must be the very value the authorizer checks. Node keeps the FIRST of repeated
    // Authorization headers, the authorizer event the LAST: a viewer's header sent before an
    // editor's was cached with the editor's policy. Like API Gateway, use the last one for both.
    const authorization = identitySource(request);
    // The identity source (Authorization) is missing: API Gateway answers 401 without calling the authorizer.
    if (!authorization) throw new GatewayError('UNAUTHORIZED');
    let result = authorizerGate.cached(authorization);
    if (!result) {
      try {
        result = await lambda.invoke<APIGatewayAuthorizerResult>(AUTHORIZER_HANDLER, {
          type: 'REQUEST',
          methodArn,
          resource: `${BASE_PATH}${route.path}`,
          path: `${BASE_PATH}${path}`,
          httpMethod: method,
          headers: { ...withoutAuthorization(singleValueHeaders(passed.headers)), Authorization: authorization },
          multiValueHeaders: { ...withoutAuthorization(multiValueHeaders(passed.headers)), Authorization: [authorization] },
          pathParameters,
          // The query as the integration gets it (REQUEST authorizer input: api-gateway-lambda-authorizer-input.html).
          ...passed.query,
          stageVariables: null,
          requestContext: requestContext(request, route, method, path),
        });
      } catch (error) {
        // The authorizer's own 'Unauthorized' is a 401; anything else (an error, a timeout, or a
        // throttle over its reserved concurrency) is AUTHORIZER_FAILURE, at once: API Gateway
        // neither queues nor retries (supported-gateway-response-types.html).
        if (error instanceof LambdaFunctionError && error.errorMessage === 'Unauthorized') throw new GatewayError('UNAUTHORIZED');
        console.error(
          'Authorizer failed:',
          error instanceof LambdaFunctionError
            ? `${error.errorType}: ${error.errorMessage}`
            : error instanceof Error
              ? error.message
              : error,
        );
        throw new GatewayError('AUTHORIZER_FAILURE');
      }
      authorizerGate.remember(authorization, result);
    }
    if (!policyAllows(result, methodArn)) throw new GatewayError('ACCESS_DENIED');
    return result;
  }

  async function handle(request: IncomingMessage, response: ServerResponse, log: { user?: string }): Promise<number> {
    // The front end refuses a declared length over the payload limit before anything else.
    if (Number(request.headers['content-length'] ?? 0) > PAYLOAD_LIMIT_BYTES) {
      // The body is not wanted: the connection closes after the answer instead of reading it all.
      response.shouldKeepAlive = false;
      request.resume();
      throw new GatewayAnswer(payloadLimitAnswer());
    }
    const url = parseTarget(request.url ?? '');
    if (url === 'dot-segment') throw new GatewayError('MISSING_AUTHENTICATION_TOKEN');
    if (url === 'not-a-path') throw new GatewayAnswer(jsonAnswer(plainProblem('malformed-request', 'The request target is not a path')));
    // API Gateway routes by the method X-HTTP-Method-Override names, not the request line's
    // (https://docs.aws.amazon.com/apigateway/latest/developerguide/api-gateway-known-issues.html);
    // the handlers refuse such requests (functions/http/method-override.ts).
    const method = methodOverride(request.rawHeaders) ?? request.method ?? 'GET';
    const vtl = templateRequest(request, method);
    if (url.pathname !== BASE_PATH && !url.pathname.startsWith(`${BASE_PATH}/`)) throw new GatewayError('MISSING_AUTHENTICATION_TOKEN');
    const path = url.pathname.slice(BASE_PATH.length);
    // The event's path keeps a trailing slash; the resource is matched without it.
    const resourcePath = matchedResourcePath(path);
    // Stage method throttling comes before everything else, the authorizer included (gateway-throttling.ts).
    if (!throttling.admit(method, resourcePath)) throw new GatewayError('THROTTLED');

    // The service index, the OpenAPI document and the docs page: MOCK integrations without
    // credentials (GET, HEAD with ETag and 304; OPTIONS; 405 for anything else).
    if ((PUBLIC_DOCUMENT_PATHS as readonly string[]).includes(resourcePath)) {
      if (method === 'OPTIONS') return sendAnswer(response, mockAnswer(optionsAnswer(DOCUMENT_METHODS, corsOrigins), vtl));
      if (method !== 'GET' && method !== 'HEAD')
        return sendAnswer(response, mockAnswer(methodNotAllowedAnswer(DOCUMENT_METHODS, corsOrigins), vtl));
      let answer = documentAnswers.get(resourcePath);
      if (!answer) {
        const document = await localDocument(resourcePath);
        if (!document) throw new GatewayError('MISSING_AUTHENTICATION_TOKEN');
        answer = documentAnswer(document, corsOrigins);
        documentAnswers.set(resourcePath, answer);
      }
      return sendAnswer(response, mockAnswer(answer, vtl));
    }
    const match = matchRoute(method, resourcePath || '/');
    if (!match.route) {
      if (match.allowedMethods.length > 0) {
        const answer =
          method === 'OPTIONS'
            ? optionsAnswer(match.allowedMethods, corsOrigins)
            : methodNotAllowedAnswer(match.allowedMethods, corsOrigins);
        return sendAnswer(response, mockAnswer(answer, vtl));
      }
      // With CORS on, `/v1.1/{proxy+}` answers every other path below the base path.
      if (unknownPath && resourcePath !== '')
        return sendAnswer(response, mockAnswer(method === 'OPTIONS' ? unknownPath.OPTIONS : unknownPath.ANY, vtl));
      throw new GatewayError('MISSING_AUTHENTICATION_TOKEN');
    }
    const { route, pathParameters } = match;
    // Decoded before the authorizer, as API Gateway decodes before it identifies the API (request-body.ts).
    const body = await readDecodedBody(request, PAYLOAD_LIMIT_BYTES, {
      tooLarge: () => new GatewayAnswer(payloadLimitAnswer()),
      unsupported: () => new GatewayError('UNSUPPORTED_MEDIA_TYPE'),
      malformed: () =>
        new GatewayAnswer(
          jsonAnswer(
            plainProblem('malformed-request', 'The request body is not valid HTTP/1.1 message framing (chunk sizes are hexadecimal)'),
          ),
        ),
    });

    const methodArn = `arn:aws:execute-api:${LOCAL_REGION}:${LOCAL_ACCOUNT}:${API_ID}/${STAGE}/${method}${BASE_PATH}${resourcePath}`;
    // What API Gateway passes on, to the authorizer and the integration alike (proxy-event.ts).
    const passed = { headers: gatewayHeaderLines(request, STAGE_TRACING_ENABLED), query: queryParameters(url) };
    // A method with authorization NONE ("NONE for open access",
    // https://docs.aws.amazon.com/apigateway/latest/api/API_Method.html) calls no authorizer; its
    // event has no authorizer context.
    let context: ReturnType<typeof authorizerContext> | undefined;
    if (isAuthenticated(route)) {
      const authorization = await authorize(request, passed, route, method, methodArn, path, pathParameters);
      log.user = authorization.principalId;
      // Context values reach the integration as strings; an object or array is a misconfigured authorizer.
      context = authorizerContext(authorization);
      if (!context) throw new GatewayError('AUTHORIZER_CONFIGURATION_ERROR');
    }
    const event: APIGatewayProxyEvent = {
      // The resource and path as deployed: the `v1.1` resource is part of both.
      resource: `${BASE_PATH}${route.path}`,
      path: `${BASE_PATH}${path}`,
      httpMethod: method,
      headers: singleValueHeaders(passed.headers),
      multiValueHeaders: multiValueHeaders(passed.headers),
      ...passed.query,
      pathParameters: Object.keys(pathParameters).length ? pathParameters : null,
      stageVariables: null,
      ...eventBody(body),
      requestContext: {
        ...requestContext(request, route, method, path),
        ...(context ? { authorizer: context } : {}),
      },
    } as unknown as APIGatewayProxyEvent;
    // An event over Lambda's payload limit is never delivered to the handler.
    if (Buffer.byteLength(JSON.stringify(event)) > LAMBDA_MAX_PAYLOAD_BYTES) throw new GatewayAnswer(jsonAnswer(REQUEST_TOO_LARGE_DEFAULT));

    let result: APIGatewayProxyResult;
    try {
      result = await lambda.invoke<APIGatewayProxyResult>(route.handler, event);
    } catch (error) {
      // "If the Lambda API rejects the invocation request, API Gateway returns a 500 error code. If
      // the function runs but returns an error, or returns a response in the wrong format, API
      // Gateway returns a 502" (https://docs.aws.amazon.com/lambda/latest/dg/services-apigateway-errors.html).
      // A throttled handler (the account's unreserved concurrency in use: the handlers reserve
      // none) is the former: the stack's DEFAULT_5XX. A function error, a timeout and a response
      // over Lambda's 6 MB are the latter: INTEGRATION_FAILURE.
      if (error instanceof LambdaThrottledError) {
        console.error(`${route.handler} throttled: ${error.reason}`);
        throw new GatewayError('DEFAULT_5XX', 500, 'Internal server error');
      }
      console.error(
        `${route.handler} failed:`,
        error instanceof LambdaFunctionError ? `${error.errorType}: ${error.errorMessage}` : error instanceof Error ? error.message : error,
      );
      throw new GatewayError('INTEGRATION_FAILURE');
    }
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- the handler is user code: its result may be anything at runtime
    if (!result || typeof result.statusCode !== 'number') throw new GatewayError('INTEGRATION_FAILURE');
    // CORS headers on proxy responses are the handler's own (http-cors), as behind API Gateway.
    return send(
      response,
      result.statusCode,
      integrationHeaders(result),
      result.body ? Buffer.from(result.body, result.isBase64Encoded ? 'base64' : 'utf8') : undefined,
    );
  }

  function onRequest(request: IncomingMessage, response: ServerResponse) {
    const started = performance.now();
    const log: { user?: string } = {};
    handle(request, response, log)
      .catch((error: unknown) => {
        let answer: Answer;
        if (error instanceof GatewayAnswer) answer = error.answer;
        else {
          if (!(error instanceof GatewayError)) console.error('Local gateway error:', error);
          const failure = error instanceof GatewayError ? error : new GatewayError('INTEGRATION_FAILURE');
          answer = gatewayResponse(failure.type, templateRequest(request, request.method ?? 'GET'), failure.status, failure.message);
        }
        if (!response.headersSent) return sendAnswer(response, answer);
        return answer.statusCode;
      })
      .then((status) => {
        accessLog({
          method: request.method ?? '',
          path: logPath(request.url),
          status,
          durationMs: Math.round(performance.now() - started),
          ...log,
        });
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
    retireEnvironments: (functionName) => lambda.retireEnvironments(functionName),
    close: () =>
      new Promise<void>((resolvePromise) => {
        lambda.close();
        server.closeAllConnections();
        server.close(() => resolvePromise());
      }),
  };
}

/** The functions the stack deploys, by name: each route's handler and the authorizer, with their FUNCTION_SETTINGS rows. */
export function deployedFunctions(functionsDirectory: string): Record<string, FunctionConfiguration> {
  const bundle = (name: string) => pathToFileURL(resolve(functionsDirectory, name, 'index.mjs')).href;
  const functions: Record<string, FunctionConfiguration> = {
    [AUTHORIZER_HANDLER]: { bundleUrl: bundle(AUTHORIZER_HANDLER), settings: FUNCTION_SETTINGS.authorizer },
  };
  for (const route of routes) functions[route.handler] = { bundleUrl: bundle(route.handler), settings: FUNCTION_SETTINGS.handler };
  functions[WEBHOOK_FUNCTIONS.consumer.handler] = {
    bundleUrl: bundle(WEBHOOK_FUNCTIONS.consumer.handler),
    settings: FUNCTION_SETTINGS.webhookConsumer,
  };
  functions[WEBHOOK_FUNCTIONS.delivery.handler] = {
    bundleUrl: bundle(WEBHOOK_FUNCTIONS.delivery.handler),
    settings: FUNCTION_SETTINGS.webhookDelivery,
  };
  return functions;
}

function send(
  response: ServerResponse,
  statusCode: number,
  headers: Record<string, string | string[]>,
  body?: string | Buffer,
): Promise<number> {
  return sendCompressed(response, statusCode, headers, body);
}

function sendAnswer(response: ServerResponse, answer: Answer): Promise<number> {
  return send(response, answer.statusCode, answer.headers, answer.body);
}

function payloadLimitAnswer(): Answer {
  return { statusCode: PAYLOAD_LIMIT_ANSWER.statusCode, headers: { ...PAYLOAD_LIMIT_ANSWER.headers }, body: PAYLOAD_LIMIT_ANSWER.body };
}

function jsonAnswer(answer: { statusCode: number; headers: Readonly<Record<string, string>>; body: unknown }): Answer {
  return { statusCode: answer.statusCode, headers: { ...answer.headers }, body: JSON.stringify(answer.body) };
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
  const escaped = resource
    .replace(/[.+^${}()|[\]\\]/g, '\\$&')
    .replace(/\*/g, '.*')
    .replace(/\?/g, '.');
  return new RegExp(`^${escaped}$`);
}
