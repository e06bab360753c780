// The local gateway's REQUEST authorizer step, as API Gateway runs it: the identity source (the
// last Authorization header), the result cache (authorizer-stand-in.ts), the authorizer bundle
// invoked with the event API Gateway sends it, the IAM policy of its result evaluated for the
// method, and the authorizer context the integration then gets.
import type { APIGatewayAuthorizerResult } from 'aws-lambda';
import { BASE_PATH, isAuthenticated } from '../../functions/routes.ts';
import { AUTHORIZER_HANDLER } from '../../functions/unrouted-functions.ts';
import type { AuthorizerStandIn } from './authorizer-stand-in.ts';
import { GatewayError } from './gateway-failures.ts';
import { LambdaFunctionError } from './lambda-errors.ts';
import type { LocalLambda } from './lambda-runtime.ts';
import {
  authorizerContext,
  identitySource,
  multiValueHeaders,
  requestContext,
  singleValueHeaders,
  withoutAuthorization,
  type RoutedRequest,
} from './proxy-event.ts';

/**
 * The authorizer context of the route's proxy event: none for a method with authorization NONE,
 * else the authorizer's (its principal noted for the access log in `log.user`). Throws the
 * GatewayError API Gateway answers with when the caller is not let through.
 */
export async function authorizedContext(
  lambda: LocalLambda,
  cache: AuthorizerStandIn,
  routed: RoutedRequest,
  methodArn: string,
  log: { user?: string },
): Promise<Record<string, string> | undefined> {
  // A method with authorization NONE ("NONE for open access",
  // https://docs.aws.amazon.com/apigateway/latest/api/API_Method.html) calls no authorizer; its
  // event has no authorizer context.
  if (!isAuthenticated(routed.route)) return undefined;
  const authorization = await authorize(lambda, cache, routed, methodArn);
  log.user = authorization.principalId;
  // Context values reach the integration as strings; an object or array is a misconfigured authorizer.
  const context = authorizerContext(authorization);
  if (!context) throw new GatewayError('AUTHORIZER_CONFIGURATION_ERROR');
  return context;
}

/** The authorizer's result for the request (cached, or from invoking it), if its policy allows `methodArn`. */
async function authorize(
  lambda: LocalLambda,
  cache: AuthorizerStandIn,
  routed: RoutedRequest,
  methodArn: string,
): Promise<APIGatewayAuthorizerResult> {
  // The cache key must be the very value the authorizer checks. Node keeps the FIRST of repeated
  // Authorization headers, the authorizer event the LAST: a viewer's header sent before an
  // editor's was cached with the editor's policy. Like API Gateway, use the last one for both.
  const authorization = identitySource(routed.request);
  // The identity source (Authorization) is missing: API Gateway answers 401 without calling the authorizer.
  if (!authorization) throw new GatewayError('UNAUTHORIZED');
  let result = cache.cached(authorization);
  if (!result) {
    result = await invokeAuthorizer(lambda, routed, methodArn, authorization);
    cache.remember(authorization, result);
  }
  if (!policyAllows(result, methodArn)) throw new GatewayError('ACCESS_DENIED');
  return result;
}

/** Invokes the authorizer with API Gateway's REQUEST authorizer event; a failure is the gateway response API Gateway gives. */
async function invokeAuthorizer(
  lambda: LocalLambda,
  { request, route, method, path, pathParameters, headers, query }: RoutedRequest,
  methodArn: string,
  authorization: string,
): Promise<APIGatewayAuthorizerResult> {
  try {
    return await lambda.invoke<APIGatewayAuthorizerResult>(AUTHORIZER_HANDLER, {
      type: 'REQUEST',
      methodArn,
      resource: `${BASE_PATH}${route.path}`,
      path: `${BASE_PATH}${path}`,
      httpMethod: method,
      headers: { ...withoutAuthorization(singleValueHeaders(headers)), Authorization: authorization },
      multiValueHeaders: { ...withoutAuthorization(multiValueHeaders(headers)), Authorization: [authorization] },
      pathParameters,
      // The query as the integration gets it (REQUEST authorizer input: api-gateway-lambda-authorizer-input.html).
      ...query,
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
      error instanceof LambdaFunctionError ? `${error.errorType}: ${error.errorMessage}` : error instanceof Error ? error.message : error,
    );
    throw new GatewayError('AUTHORIZER_FAILURE');
  }
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
