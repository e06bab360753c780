// Responses that API Gateway itself sends (no handler runs): authentication failures, unknown
// routes, throttling, oversized requests. The CDK stack configures them from this table and the
// local API answers with the same bodies, so both speak the same problem+json.
import { PROBLEM_CONTENT_TYPE, problemBody, RETRY_AFTER_SECONDS, type ProblemKind } from '../events/problems.ts';
import { allowHeader } from '../routes.ts';

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
  REQUEST_TOO_LARGE: { kind: 'payload-too-large', detail: 'The request exceeds the API Gateway size limit' },
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
