// Responses that API Gateway itself sends (no handler runs): authentication failures, unknown
// routes, throttling. The CDK stack configures them from this table (lib/cdk/problem-gateway-responses.ts)
// and the local gateway answers with the same definitions (header mappings evaluated per request),
// so both speak the same problem+json.
import { PROBLEM_CONTENT_TYPE, PROBLEM_TYPE_BASE, problemBody, RETRY_AFTER_SECONDS, type ProblemKind } from '../events/problems.ts';
import { CORS_EXPOSED_HEADERS } from '../routes.ts';
import { allowHeader } from '../route-matching.ts';

export interface GatewayResponse {
  kind: ProblemKind;
  detail: string;
  headers?: Record<string, string>;
}

/** RFC 7617 challenge; API Gateway only passes WWW-Authenticate from the gateway response. */
export const WWW_AUTHENTICATE = 'Basic realm="museum", charset="UTF-8"';

export const GATEWAY_RESPONSES = {
  UNAUTHORIZED: {
    kind: 'unauthorized',
    detail: 'Valid HTTP Basic credentials are required',
    headers: { 'WWW-Authenticate': WWW_AUTHENTICATE },
  },
  ACCESS_DENIED: { kind: 'forbidden', detail: 'Your role does not allow this operation' },
  // API Gateway answers an unknown path or method with MISSING_AUTHENTICATION_TOKEN (403 by
  // default); to a client that is a 404.
  MISSING_AUTHENTICATION_TOKEN: { kind: 'not-found', detail: 'There is no such resource or method in this API' },
  // Listed for the OpenAPI document's example only: API Gateway does not let this one be
  // customised, so the stack does not configure it (configuredGatewayResponses) and the local
  // gateway answers API Gateway's default (REQUEST_TOO_LARGE_DEFAULT).
  REQUEST_TOO_LARGE: { kind: 'payload-too-large', detail: 'The request exceeds the API Gateway size limit' },
  // A request Content-Encoding API Gateway cannot decode (not gzip, deflate or identity, or bytes
  // not so coded); the handlers refuse any coding too, hence `Accept-Encoding: identity`.
  UNSUPPORTED_MEDIA_TYPE: {
    kind: 'unsupported-media-type',
    detail: 'The request body must be sent as it is, without a Content-Encoding',
    headers: { 'Accept-Encoding': 'identity' },
  },
  THROTTLED: {
    kind: 'too-many-requests',
    detail: 'Too many requests; retry after a pause',
    headers: { 'Retry-After': String(RETRY_AFTER_SECONDS) },
  },
  // The authorizer was throttled (reserved concurrency), timed out or could not read its store:
  // a temporary condition, so 503 with Retry-After rather than API Gateway's default 500.
  AUTHORIZER_FAILURE: {
    kind: 'service-unavailable',
    detail: 'Credentials cannot be checked right now; retry shortly',
    headers: { 'Retry-After': String(RETRY_AFTER_SECONDS) },
  },
  AUTHORIZER_CONFIGURATION_ERROR: {
    kind: 'service-unavailable',
    detail: 'Credentials cannot be checked right now; retry shortly',
    headers: { 'Retry-After': String(RETRY_AFTER_SECONDS) },
  },
  INTEGRATION_FAILURE: { kind: 'bad-gateway', detail: 'The operation failed to produce a response; it has been logged' },
  INTEGRATION_TIMEOUT: { kind: 'gateway-timeout', detail: 'The operation did not answer in time' },
} as const satisfies Record<string, GatewayResponse>;

export type GatewayResponseType = keyof typeof GATEWAY_RESPONSES;

/** Headers every gateway response carries, besides its own. */
export const GATEWAY_RESPONSE_HEADERS = {
  'Content-Type': PROBLEM_CONTENT_TYPE,
  'X-Content-Type-Options': 'nosniff',
  'Cache-Control': 'no-store',
} as const;

export function gatewayResponse(type: GatewayResponseType) {
  const response: GatewayResponse = GATEWAY_RESPONSES[type];
  const body = problemBody(response.kind, response.detail);
  return { statusCode: body.status, headers: { ...GATEWAY_RESPONSE_HEADERS, ...response.headers }, body };
}

/**
 * RFC 9110 15.5.6: a method the resource does not have is 405 with the methods it does have in
 * `Allow`. Not in the table above because its header depends on the resource; the local gateway
 * and the deployed one (an ANY method with a MOCK integration per resource) both answer with this.
 */
export function methodNotAllowedResponse(allowedMethods: readonly string[]) {
  const allow = allowHeader(allowedMethods);
  const body = problemBody('method-not-allowed', `This resource allows only ${allow}`);
  return { statusCode: body.status, headers: { ...GATEWAY_RESPONSE_HEADERS, Allow: allow }, body };
}

/** A gateway response as the stack configures it: status, header mappings and body template. */
export interface ConfiguredGatewayResponse {
  /** Omitted: API Gateway keeps the status code of the error it is answering. */
  statusCode?: number;
  /** Header name -> mapping: a single-quoted static value or `method.request.header.Name`. */
  headers: Record<string, string>;
  /** The `application/json` template: problem+json, with `$context.error.messageString` in the catch-all. */
  template: string;
}

/** Response types only a deployed gateway produces (the local run has no request validator or WAF), and catch-alls. */
const DEPLOYED_ONLY_RESPONSES: Record<string, { statusCode?: number; headers?: Record<string, string>; body: object | string }> = {
  // Request validation of required path parameters (the handlers validate everything else).
  BAD_REQUEST_PARAMETERS: { statusCode: 400, body: problemBody('validation-error', 'A required request parameter is missing or invalid') },
  BAD_REQUEST_BODY: { statusCode: 400, body: problemBody('validation-error', 'The request body is invalid') },
  // The optional WAF web ACL (rate-based rule, size rule) blocked the request.
  WAF_FILTERED: { statusCode: 403, body: problemBody('forbidden', 'The request was blocked by the firewall') },
  // Any other 4xx keeps its own status, so it cannot be a kind of the catalogue (each has one
  // status); RFC 9457 makes `status` optional, so it is left out rather than guessed. Its type is
  // under the API's namespace like every other. messageString is API Gateway's message, already
  // quoted for JSON. What reaches it: response types of features this API does not use (API keys,
  // usage plans, IAM signatures). REQUEST_TOO_LARGE is not among them: API Gateway does not let it
  // be customised (https://docs.aws.amazon.com/apigateway/latest/developerguide/api-gateway-known-issues.html).
  DEFAULT_4XX: {
    body: `{"type":"${PROBLEM_TYPE_BASE}request-rejected","title":"Request rejected","detail":$context.error.messageString}`,
  },
  // Any other 5xx (API or authorizer misconfiguration) is an internal error.
  DEFAULT_5XX: { statusCode: 500, body: problemBody('internal-error', 'The API gateway failed to handle the request; it has been logged') },
};

/**
 * The CORS header mappings of the gateway responses. A gateway response header is a static value
 * or a copy of a request parameter, nothing computed
 * (https://docs.aws.amazon.com/apigateway/latest/developerguide/api-gateway-swagger-extensions-gateway-responses.gatewayResponse.html),
 * so it cannot check an Origin against a list. One allowed origin is named statically (a browser
 * on any other origin then reads nothing). With several, none: copying the request's Origin would
 * let every web site read these answers, and naming one would serve only that one. A page on an
 * allowed origin then sees a gateway's 401/403/429/5xx as a failed fetch, not as a problem.
 */
export function gatewayCorsHeaders(corsOrigins: readonly string[]): Record<string, string> {
  if (corsOrigins.length !== 1) return {};
  return {
    'Access-Control-Allow-Origin': `'${corsOrigins[0]}'`,
    'Access-Control-Expose-Headers': `'${CORS_EXPOSED_HEADERS}'`,
    Vary: "'Origin'",
  };
}

/** The types of GATEWAY_RESPONSES that API Gateway lets a stack customise. */
export const CONFIGURABLE_TYPES = (Object.keys(GATEWAY_RESPONSES) as GatewayResponseType[]).filter((type) => type !== 'REQUEST_TOO_LARGE');

/** Every gateway response the stack configures, by response type, with the CORS headers for `corsOrigins`. */
export function configuredGatewayResponses(corsOrigins: readonly string[] = []): Record<string, ConfiguredGatewayResponse> {
  const cors = gatewayCorsHeaders(corsOrigins);
  const quoted = (headers: Record<string, string>) =>
    Object.fromEntries(Object.entries(headers).map(([name, value]) => [name, `'${value}'`]));
  const shared = CONFIGURABLE_TYPES.map((type) => {
    const { statusCode, headers, body } = gatewayResponse(type);
    return [type, { statusCode, headers: { ...quoted(headers), ...cors }, template: JSON.stringify(body) }] as const;
  });
  const deployedOnly = Object.entries(DEPLOYED_ONLY_RESPONSES).map(
    ([type, response]) =>
      [
        type,
        {
          ...(response.statusCode === undefined ? {} : { statusCode: response.statusCode }),
          headers: { ...quoted({ ...GATEWAY_RESPONSE_HEADERS, ...response.headers }), ...cors },
          template: typeof response.body === 'string' ? response.body : JSON.stringify(response.body),
        },
      ] as const,
  );
  return Object.fromEntries([...shared, ...deployedOnly]);
}

/**
 * API Gateway's own answer to a request whose event passes Lambda's 6 MB invocation payload
 * limit: REQUEST_TOO_LARGE, whose default cannot be customised
 * (https://docs.aws.amazon.com/apigateway/latest/developerguide/api-gateway-known-issues.html,
 * https://docs.aws.amazon.com/lambda/latest/dg/gettingstarted-limits.html). Its body is API
 * Gateway's default `{"message": ...}`, not a problem (observed: koki-develop/lgtm-generator#10).
 */
export const REQUEST_TOO_LARGE_DEFAULT = {
  statusCode: 413,
  headers: { 'Content-Type': 'application/json' },
  body: { message: 'Request Too Long' },
} as const;

/**
 * The answer to a request over API Gateway's 10 MB payload limit
 * (https://docs.aws.amazon.com/apigateway/latest/developerguide/limits.html). AWS documents no
 * body; two community reports observed the same one, plain text from the front end before any
 * gateway response applies (no CORS header, no request id): `HTTP content length exceeded
 * 10485760 bytes.` with `content-type: text; charset=utf-8` (koki-develop/lgtm-generator#10).
 * Unverified beyond those reports.
 */
export const PAYLOAD_LIMIT_BYTES = 10 * 1024 * 1024;
export const PAYLOAD_LIMIT_ANSWER = {
  statusCode: 413,
  headers: { 'Content-Type': 'text; charset=utf-8' },
  body: `HTTP content length exceeded ${PAYLOAD_LIMIT_BYTES} bytes.`,
} as const;
