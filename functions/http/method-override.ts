// API Gateway routes a request by the method its X-HTTP-Method-Override header names
// (https://docs.aws.amazon.com/apigateway/latest/developerguide/api-gateway-known-issues.html):
// a GET carrying `X-HTTP-Method-Override: DELETE` reaches the DELETE handler, past anything that
// trusts the request line's method (a proxy's or firewall's rules, a cache, a browser's CORS
// "simple request"). This API offers no override, so every handler refuses a request carrying
// one (or its common variants) with a 400 problem before the operation runs.
import type { MiddlewareObj } from '@middy/core';
import type { APIGatewayProxyEvent } from 'aws-lambda';
import { HttpProblem } from '../events/problems.ts';
import { headerKey } from './header-lookup.ts';

/** Method-override headers, lower-case (after http-header-normalizer). */
export const METHOD_OVERRIDE_HEADERS = ['x-http-method-override', 'x-http-method', 'x-method-override'] as const;

/** Refuses a request that carries a method-override header. */
export function refuseMethodOverride(): MiddlewareObj<APIGatewayProxyEvent> {
  return {
    before: ({ event }) => {
      const sent = METHOD_OVERRIDE_HEADERS.find(
        (header) => headerKey(event.headers, header) !== undefined || headerKey(event.multiValueHeaders, header) !== undefined,
      );
      if (sent === undefined) return;
      const field = sent
        .replace(/(^|-)([a-z])/g, (_, dash: string, letter: string) => `${dash}${letter.toUpperCase()}`)
        .replace('Http', 'HTTP');
      const message = 'is not accepted: send the request with the method itself';
      throw new HttpProblem('validation-error', `${field} ${message}`, { errors: [{ field, message }] });
    },
  };
}
