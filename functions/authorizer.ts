// API Gateway REQUEST authorizer: HTTP Basic credentials -> an IAM policy for every route the
// user's role allows. API Gateway caches the policy per Authorization header and reuses it for
// every route, so it must never cover only the route that was called first.
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import middy from '@middy/core';
import type { APIGatewayAuthorizerResult, APIGatewayRequestAuthorizerEvent } from 'aws-lambda';
import { basicAuthenticator } from './config.ts';
import { headerValue } from './http/header-lookup.ts';
import { logger } from './observability.ts';
import { arnResourcePath, isAuthenticated, roleAllows, routeMethods, routes, type Role } from './routes.ts';

/**
 * execute-api ARNs for every route behind the authorizer that `role` may call. The stage ARN and any resource prefix in
 * front of the route paths (e.g. `/v1.1`) are taken from the request, so the policy fits however
 * the stack mounts the routes.
 */
export function allowedResources(methodArn: string, resource: string, role: Role): string[] {
  const [apiArn = '', stage = ''] = methodArn.split('/');
  const calledRoute = routes.find((route) => resource.endsWith(route.path));
  const prefix = calledRoute ? resource.slice(0, resource.length - calledRoute.path.length) : '';
  return routes
    .filter((route) => isAuthenticated(route) && roleAllows(role, route.role))
    .flatMap((route) => routeMethods(route).map((method) => `${apiArn}/${stage}/${method}${prefix}${arnResourcePath(route.path)}`));
}

async function authorize(event: APIGatewayRequestAuthorizerEvent): Promise<APIGatewayAuthorizerResult> {
  // Any error but 'Unauthorized' (the users table cannot be read, ...) is API Gateway's
  // AUTHORIZER_FAILURE, a 503 with Retry-After (docs/DEPLOY.md, "Gateway responses").
  const principal = await basicAuthenticator().authenticate(headerValue(event.headers, 'authorization'));
  if (!principal) {
    logger.info('Authentication failed'); // no username: it may be a mistyped password
    // This exact message is what makes API Gateway answer 401 (the UNAUTHORIZED gateway response).
    throw new Error('Unauthorized');
  }
  logger.info('Authenticated', { username: principal.username, role: principal.role });
  return {
    principalId: principal.username,
    policyDocument: {
      Version: '2012-10-17',
      Statement: [
        { Action: 'execute-api:Invoke', Effect: 'Allow', Resource: allowedResources(event.methodArn, event.resource, principal.role) },
      ],
    },
    context: { username: principal.username, role: principal.role },
  };
}

export const handler = middy(authorize).use(injectLambdaContext(logger, { resetKeys: true, logEvent: false }));
