// The local gateway's handling of one request, in API Gateway's order: the declared body length
// against the payload limit, the request target and the method it is routed as, stage method
// throttling, the MOCK integrations (public documents, OPTIONS, 405, unknown paths), the route,
// its body (read, bounded, decoded), the REQUEST authorizer, then the Lambda proxy integration.
// A step that ends the request early throws (gateway-failures.ts); local-api-gateway.ts answers it.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { PAYLOAD_LIMIT_BYTES } from '../../functions/http/gateway-responses.ts';
import { BASE_PATH } from '../../functions/routes.ts';
import { matchRoute } from '../../functions/route-matching.ts';
import { STAGE_TRACING_ENABLED } from '../../functions/deployment.ts';
import type { AuthorizerStandIn } from './authorizer-stand-in.ts';
import { authorizedContext } from './gateway-authorization.ts';
import { GatewayAnswer, GatewayError, jsonAnswer, payloadLimitAnswer } from './gateway-failures.ts';
import { templateRequest, type Answer } from './gateway-http-semantics.ts';
import type { MockIntegrations, MockRequest } from './gateway-mock-integrations.ts';
import type { MethodThrottling } from './gateway-throttling.ts';
import { gatewayProxyIntegration } from './gateway-proxy-integration.ts';
import { plainProblem } from './http-server.ts';
import { LOCAL_ACCOUNT, LOCAL_REGION } from './lambda-context.ts';
import type { LocalLambda } from './lambda-runtime.ts';
import { API_ID, gatewayHeaderLines, methodOverride, queryParameters, STAGE, type RoutedRequest } from './proxy-event.ts';
import { matchedResourcePath, parseTarget } from './request-target.ts';
import { readDecodedBody } from './request-body.ts';
import { sendAnswer as sendCompressed } from './response-compression.ts';

/** What the steps use: the run's Lambda, API Gateway's authorizer cache and throttles, the stack's MOCK integrations. */
export interface GatewayParts {
  lambda: LocalLambda;
  authorizerCache: AuthorizerStandIn;
  throttling: MethodThrottling;
  mocks: MockIntegrations;
}

/** The request target as API Gateway routes it. */
interface RoutingTarget extends MockRequest {
  url: URL;
  /** The path below the base path, as requested (the event's path keeps a trailing slash). */
  path: string;
}

/** Handles one request through to its answer; the status sent. `log.user` is set once the authorizer names the caller. */
export async function handleRequest(
  gateway: GatewayParts,
  request: IncomingMessage,
  response: ServerResponse,
  log: { user?: string },
): Promise<number> {
  refuseDeclaredOversizeBody(request, response);
  const target = routingTarget(request);
  // Stage method throttling comes before everything else, the authorizer included (gateway-throttling.ts).
  if (!gateway.throttling.admit(target.method, target.resourcePath)) throw new GatewayError('THROTTLED');
  if (gateway.mocks.isPublicDocument(target.resourcePath)) return sendAnswer(response, await gateway.mocks.documentAnswer(target));
  const match = matchRoute(target.method, target.resourcePath || '/');
  if (!match.route) return sendAnswer(response, gateway.mocks.unroutedAnswer(target, match.allowedMethods));
  const { route, pathParameters } = match;
  const body = await readBody(request);
  const routed: RoutedRequest = {
    request,
    route,
    method: target.method,
    path: target.path,
    pathParameters,
    // What API Gateway passes on, to the authorizer and the integration alike (proxy-event.ts).
    headers: gatewayHeaderLines(request, STAGE_TRACING_ENABLED),
    query: queryParameters(target.url),
  };
  const methodArn = `arn:aws:execute-api:${LOCAL_REGION}:${LOCAL_ACCOUNT}:${API_ID}/${STAGE}/${target.method}${BASE_PATH}${target.resourcePath}`;
  const authorizer = await authorizedContext(gateway.lambda, gateway.authorizerCache, routed, methodArn, log);
  return gatewayProxyIntegration(gateway.lambda, response, routed, body, authorizer);
}

export function sendAnswer(response: ServerResponse, answer: Answer): Promise<number> {
  return sendCompressed(response, answer.statusCode, answer.headers, answer.body);
}

/** The front end refuses a declared length over the payload limit before anything else. */
function refuseDeclaredOversizeBody(request: IncomingMessage, response: ServerResponse): void {
  if (Number(request.headers['content-length'] ?? 0) > PAYLOAD_LIMIT_BYTES) {
    // The body is not wanted: the connection closes after the answer instead of reading it all.
    response.shouldKeepAlive = false;
    request.resume();
    throw new GatewayAnswer(payloadLimitAnswer());
  }
}

/** The target's path below the base path and the method it is routed as; a target outside the base path is refused. */
function routingTarget(request: IncomingMessage): RoutingTarget {
  const url = parseTarget(request.url ?? '');
  if (url === 'dot-segment') throw new GatewayError('MISSING_AUTHENTICATION_TOKEN');
  if (url === 'not-a-path') throw new GatewayAnswer(jsonAnswer(plainProblem('malformed-request', 'The request target is not a path')));
  // API Gateway routes by the method X-HTTP-Method-Override names, not the request line's
  // (https://docs.aws.amazon.com/apigateway/latest/developerguide/api-gateway-known-issues.html);
  // the handlers refuse such requests (functions/http/method-override.ts).
  const method = methodOverride(request.rawHeaders) ?? request.method ?? 'GET';
  const template = templateRequest(request, method);
  if (url.pathname !== BASE_PATH && !url.pathname.startsWith(`${BASE_PATH}/`)) throw new GatewayError('MISSING_AUTHENTICATION_TOKEN');
  const path = url.pathname.slice(BASE_PATH.length);
  // The event's path keeps a trailing slash; the resource is matched without it.
  return { url, method, path, resourcePath: matchedResourcePath(path), template };
}

/** The routed request's body, decoded before the authorizer, as API Gateway decodes before it identifies the API (request-body.ts). */
function readBody(request: IncomingMessage): Promise<Buffer> {
  return readDecodedBody(request, PAYLOAD_LIMIT_BYTES, {
    tooLarge: () => new GatewayAnswer(payloadLimitAnswer()),
    unsupported: () => new GatewayError('UNSUPPORTED_MEDIA_TYPE'),
    malformed: () =>
      new GatewayAnswer(
        jsonAnswer(
          plainProblem('malformed-request', 'The request body is not valid HTTP/1.1 message framing (chunk sizes are hexadecimal)'),
        ),
      ),
  });
}
