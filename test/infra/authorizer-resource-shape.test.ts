// The deployed API mounts the routes under a `v1.1` resource, so API Gateway hands the
// authorizer event.resource = '/v1.1/special-events/{eventId}' and a methodArn of
// '<api-arn>/<stage>/GET/v1.1/special-events/<id>'. The policy the authorizer returns is cached
// and reused for every route: it must match each route the role allows, and no other.
import type { APIGatewayAuthorizerResult } from 'aws-lambda';
import { allowedResources } from '../../functions/authorizer.ts';
import { isAuthenticated, roleAllows, routes, ROLES } from '../../functions/routes.ts';
import { policyAllows } from '../../lib/local/gateway-authorization.ts';
import { VERSION_RESOURCE } from '../../lib/cdk/special-events-api.ts';

const API_ARN = 'arn:aws:execute-api:eu-west-1:123456789012:a1b2c3d4e5';
const EVENT_ID = '3be6453c-03eb-4357-ae5a-984a0e574a54';

function deployedRequest(route: (typeof routes)[number], stage: string) {
  const concretePath = route.path.replace('{eventId}', EVENT_ID);
  return {
    methodArn: `${API_ARN}/${stage}/${route.method}/${VERSION_RESOURCE}${concretePath}`,
    resource: `/${VERSION_RESOURCE}${route.path}`,
  };
}

function policy(resources: string[]): APIGatewayAuthorizerResult {
  return {
    principalId: 'alice',
    policyDocument: { Version: '2012-10-17', Statement: [{ Action: 'execute-api:Invoke', Effect: 'Allow', Resource: resources }] },
  };
}

// A route without credentials (authorization NONE) never reaches the authorizer: it is neither a
// first call nor in any policy.
const authenticatedRoutes = routes.filter(isAuthenticated);

describe.each(ROLES)('a cached %s policy, whichever route was called first', (role) => {
  test.each(authenticatedRoutes.map((route) => [`${route.method} ${route.path}`, route] as const))('first called %s', (_, first) => {
    const request = deployedRequest(first, 'pr-42');
    const cached = policy(allowedResources(request.methodArn, request.resource, role));
    for (const route of routes) {
      expect(policyAllows(cached, deployedRequest(route, 'pr-42').methodArn)).toBe(isAuthenticated(route) && roleAllows(role, route.role));
      // Never another stage of the same API.
      expect(policyAllows(cached, deployedRequest(route, 'prod').methodArn)).toBe(false);
    }
  });
});
