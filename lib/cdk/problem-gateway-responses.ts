// API Gateway's own answers (no Lambda ran: bad credentials, unknown route, throttling, ...) as
// problem+json, from the table the local API also answers with
// (functions/http/gateway-responses.ts), plus the response types only a deployed gateway can
// produce, and catch-alls so that no default `{"message": ...}` body ever reaches a client.
import * as apigw from 'aws-cdk-lib/aws-apigateway';
import {
  GATEWAY_RESPONSE_HEADERS,
  GATEWAY_RESPONSES,
  gatewayResponse,
  type GatewayResponseType,
} from '../../functions/http/gateway-responses.ts';
import { problemBody } from '../../functions/events/problems.ts';
import { CORS_EXPOSED_HEADERS } from '../../functions/routes.ts';

interface ProblemResponse {
  /** Omitted: API Gateway keeps the status code of the error it is answering. */
  statusCode?: number;
  headers: Record<string, string>;
  /** The problem+json body, either an object or a template with $context variables. */
  body: object | string;
}

/** Response types the local API never produces, because only a deployed gateway runs them. */
const DEPLOYED_ONLY_RESPONSES: Record<string, ProblemResponse> = {
  // Request validation of required path parameters (the handlers validate everything else).
  BAD_REQUEST_PARAMETERS: {
    statusCode: 400,
    headers: {},
    body: problemBody('validation-error', 'A required request parameter is missing or invalid'),
  },
  BAD_REQUEST_BODY: { statusCode: 400, headers: {}, body: problemBody('validation-error', 'The request body is invalid') },
  // The optional WAF web ACL (rate-based rule, size rule) blocked the request.
  WAF_FILTERED: { statusCode: 403, headers: {}, body: problemBody('forbidden', 'The request was blocked by the firewall') },
  // Any other 4xx keeps its own status; RFC 9457 makes `status` optional, so it is left out
  // rather than guessed. messageString is API Gateway's message, already quoted for JSON.
  DEFAULT_4XX: {
    headers: {},
    body: '{"type":"about:blank","title":"Request rejected","detail":$context.error.messageString}',
  },
  // Any other 5xx (API or authorizer misconfiguration) is an internal error.
  DEFAULT_5XX: {
    statusCode: 500,
    headers: {},
    body: problemBody('internal-error', 'The API gateway failed to handle the request; it has been logged'),
  },
};

/** Every gateway response the API configures, by response type. */
export function problemGatewayResponses(): Record<string, ProblemResponse> {
  const shared = Object.fromEntries(
    (Object.keys(GATEWAY_RESPONSES) as GatewayResponseType[]).map((type) => {
      const { statusCode, headers, body } = gatewayResponse(type);
      return [type, { statusCode, headers, body }];
    }),
  );
  return {
    ...shared,
    ...Object.fromEntries(
      Object.entries(DEPLOYED_ONLY_RESPONSES).map(([type, response]) => [
        type,
        { ...response, headers: { ...GATEWAY_RESPONSE_HEADERS, ...response.headers } },
      ]),
    ),
  };
}

/**
 * The CORS headers of the gateway responses, as API Gateway mapping expressions. A gateway
 * response cannot choose per request (no template logic sets headers), but it can map a request
 * header (`method.request.header.Origin`) or a static value. One allowed origin is named
 * statically. With several, the request's Origin is echoed: any origin may then read these
 * answers, which is acceptable because a gateway response holds only one of the fixed problem
 * documents of this table (public in the OpenAPI document: no event data, no user data), while
 * every answer with data comes from a handler, whose http-cors answers only the allowed origins.
 */
export function gatewayCorsHeaders(corsOrigins: readonly string[]): Record<string, string> {
  if (corsOrigins.length === 0) return {};
  return {
    'Access-Control-Allow-Origin': corsOrigins.length === 1 ? `'${corsOrigins[0]}'` : 'method.request.header.Origin',
    'Access-Control-Expose-Headers': `'${CORS_EXPOSED_HEADERS}'`,
    Vary: "'Origin'",
  };
}

/** Adds the problem+json gateway responses to `api`, with the CORS headers of gatewayCorsHeaders(). */
export function addProblemGatewayResponses(api: apigw.RestApi, corsOrigins: readonly string[] = []): void {
  const cors = gatewayCorsHeaders(corsOrigins);
  for (const [type, response] of Object.entries(problemGatewayResponses())) {
    api.addGatewayResponse(pascalCase(type), {
      type: apigw.ResponseType.of(type),
      ...(response.statusCode === undefined ? {} : { statusCode: String(response.statusCode) }),
      // Static header values are single-quoted in API Gateway's mapping syntax.
      responseHeaders: { ...Object.fromEntries(Object.entries(response.headers).map(([name, value]) => [name, `'${value}'`])), ...cors },
      templates: { 'application/json': typeof response.body === 'string' ? response.body : JSON.stringify(response.body) },
    });
  }
}

function pascalCase(type: string): string {
  return type
    .toLowerCase()
    .replace(/(^|_)([a-z0-9])/g, (_, __: string, letter: string) => letter.toUpperCase());
}
