// API Gateway's own answers (no Lambda ran: bad credentials, unknown route, throttling, ...) as
// problem+json, from the table the local gateway also answers with
// (functions/http/gateway-responses.ts), plus catch-alls so that no default `{"message": ...}`
// body ever reaches a client (except REQUEST_TOO_LARGE, which API Gateway does not let us customise).
import * as apigw from 'aws-cdk-lib/aws-apigateway';
import { configuredGatewayResponses, gatewayCorsHeaders } from '../../functions/http/gateway-responses.ts';

export { gatewayCorsHeaders };

/** Adds the problem+json gateway responses to `api`, with the CORS headers of gatewayCorsHeaders(). */
export function addProblemGatewayResponses(api: apigw.RestApi, corsOrigins: readonly string[] = []): void {
  for (const [type, response] of Object.entries(configuredGatewayResponses(corsOrigins))) {
    api.addGatewayResponse(pascalCase(type), {
      type: apigw.ResponseType.of(type),
      ...(response.statusCode === undefined ? {} : { statusCode: String(response.statusCode) }),
      responseHeaders: response.headers,
      templates: { 'application/json': response.template },
    });
  }
}

function pascalCase(type: string): string {
  return type.toLowerCase().replace(/(^|_)([a-z0-9])/g, (_, __: string, letter: string) => letter.toUpperCase());
}
