// The Lambda context object the runtime passes to a function, for the local API and the
// benchmark. Kept free of other imports: the benchmark's cold-start runner bundles it, and
// whatever it loads counts in every measured start.
import { randomUUID } from 'node:crypto';
import type { Context } from 'aws-lambda';
import { FUNCTION_SETTINGS } from '../../functions/routes.ts';

export const LOCAL_REGION = 'local';
export const LOCAL_ACCOUNT = '000000000000';

/** A context whose remaining time counts down from now to the function kind's configured timeout. */
export function lambdaContext(functionName: string, kind: keyof typeof FUNCTION_SETTINGS, logStreamName = 'local'): Context {
  const deadline = Date.now() + FUNCTION_SETTINGS[kind].timeoutSeconds * 1000;
  return {
    callbackWaitsForEmptyEventLoop: true,
    functionName,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:${LOCAL_REGION}:${LOCAL_ACCOUNT}:function:${functionName}`,
    memoryLimitInMB: String(FUNCTION_SETTINGS[kind].memorySize),
    awsRequestId: randomUUID(),
    logGroupName: `/aws/lambda/${functionName}`,
    logStreamName,
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    /* eslint-disable @typescript-eslint/no-deprecated -- deprecated members of the Context type; the local runner never calls them */
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
    /* eslint-enable @typescript-eslint/no-deprecated */
  };
}
