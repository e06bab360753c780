// The local gateway's Lambda proxy integration: the event API Gateway sends the route's function
// (within Lambda's payload limit), the function's invocation, and its result sent as the answer;
// an invocation that fails is the gateway response API Gateway answers it with.
import type { ServerResponse } from 'node:http';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { REQUEST_TOO_LARGE_DEFAULT } from '../../functions/http/gateway-responses.ts';
import { BASE_PATH } from '../../functions/routes.ts';
import { GatewayAnswer, GatewayError, jsonAnswer } from './gateway-failures.ts';
import { LambdaFunctionError, LambdaThrottledError } from './lambda-errors.ts';
import type { LocalLambda } from './lambda-runtime.ts';
import { eventBody, integrationHeaders, multiValueHeaders, requestContext, singleValueHeaders, type RoutedRequest } from './proxy-event.ts';
import { sendAnswer as sendCompressed } from './response-compression.ts';

/** Lambda's invocation payload limit, request and response (https://docs.aws.amazon.com/lambda/latest/dg/gettingstarted-limits.html). */
const LAMBDA_MAX_PAYLOAD_BYTES = 6 * 1024 * 1024;

/** Invokes the route's function with the proxy event of `routed` and sends its result; the status sent. */
export async function gatewayProxyIntegration(
  lambda: LocalLambda,
  response: ServerResponse,
  routed: RoutedRequest,
  body: Buffer,
  authorizer: Record<string, string> | undefined,
): Promise<number> {
  const result = await invokeHandler(lambda, routed.route.handler, proxyEvent(routed, body, authorizer));
  // CORS headers on proxy responses are the handler's own (http-cors), as behind API Gateway.
  return sendCompressed(
    response,
    result.statusCode,
    integrationHeaders(result),
    result.body ? Buffer.from(result.body, result.isBase64Encoded ? 'base64' : 'utf8') : undefined,
  );
}

/** The event API Gateway sends the route's function; one over Lambda's payload limit is never delivered. */
function proxyEvent(
  { request, route, method, path, pathParameters, headers, query }: RoutedRequest,
  body: Buffer,
  authorizer: Record<string, string> | undefined,
): APIGatewayProxyEvent {
  const event = {
    // The resource and path as deployed: the `v1.1` resource is part of both.
    resource: `${BASE_PATH}${route.path}`,
    path: `${BASE_PATH}${path}`,
    httpMethod: method,
    headers: singleValueHeaders(headers),
    multiValueHeaders: multiValueHeaders(headers),
    ...query,
    pathParameters: Object.keys(pathParameters).length ? pathParameters : null,
    stageVariables: null,
    ...eventBody(body),
    requestContext: {
      ...requestContext(request, route, method, path),
      ...(authorizer ? { authorizer } : {}),
    },
  } as unknown as APIGatewayProxyEvent;
  // An event over Lambda's payload limit is never delivered to the handler.
  if (Buffer.byteLength(JSON.stringify(event)) > LAMBDA_MAX_PAYLOAD_BYTES) throw new GatewayAnswer(jsonAnswer(REQUEST_TOO_LARGE_DEFAULT));
  return event;
}

/** The function's result; a refused or failed invocation, or a result that is no proxy response, is a GatewayError. */
async function invokeHandler(lambda: LocalLambda, handler: string, event: APIGatewayProxyEvent): Promise<APIGatewayProxyResult> {
  let result: APIGatewayProxyResult;
  try {
    result = await lambda.invoke<APIGatewayProxyResult>(handler, event);
  } catch (error) {
    // "If the Lambda API rejects the invocation request, API Gateway returns a 500 error code. If
    // the function runs but returns an error, or returns a response in the wrong format, API
    // Gateway returns a 502" (https://docs.aws.amazon.com/lambda/latest/dg/services-apigateway-errors.html).
    // A throttled handler (the account's unreserved concurrency in use: the handlers reserve
    // none) is the former: the stack's DEFAULT_5XX. A function error, a timeout and a response
    // over Lambda's 6 MB are the latter: INTEGRATION_FAILURE.
    if (error instanceof LambdaThrottledError) {
      console.error(`${handler} throttled: ${error.reason}`);
      throw new GatewayError('DEFAULT_5XX', 500, 'Internal server error');
    }
    console.error(
      `${handler} failed:`,
      error instanceof LambdaFunctionError ? `${error.errorType}: ${error.errorMessage}` : error instanceof Error ? error.message : error,
    );
    throw new GatewayError('INTEGRATION_FAILURE');
  }
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- the handler is user code: its result may be anything at runtime
  if (!result || typeof result.statusCode !== 'number') throw new GatewayError('INTEGRATION_FAILURE');
  return result;
}
