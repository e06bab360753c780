// The Lambda context object the runtime passes to a function, for the local API's execution
// environments (lambda-environment-worker.ts) and the benchmark. Kept free of other imports: the
// benchmark's cold-start runner bundles it, and whatever it loads counts in every measured start;
// the environments load it with Node's own type stripping, without tsx.
// https://docs.aws.amazon.com/lambda/latest/dg/nodejs-context.html
import { randomUUID } from 'node:crypto';
import type { Context } from 'aws-lambda';
import { FUNCTION_SETTINGS } from '../../functions/deployment.ts';

export const LOCAL_REGION = 'local';
export const LOCAL_ACCOUNT = '000000000000';

/** What a context needs of a function's settings (FUNCTION_SETTINGS rows). */
export interface ContextSettings {
  memorySize: number;
  timeoutSeconds: number;
}

/**
 * A context whose remaining time counts down from now to the function's configured timeout.
 * `settings` is a FUNCTION_SETTINGS kind or a row of it; each call is one invocation (a new awsRequestId).
 */
export function lambdaContext(
  functionName: string,
  settings: keyof typeof FUNCTION_SETTINGS | ContextSettings,
  logStreamName = 'local',
): Context {
  const { memorySize, timeoutSeconds } = typeof settings === 'string' ? FUNCTION_SETTINGS[settings] : settings;
  const deadline = Date.now() + timeoutSeconds * 1000;
  return {
    callbackWaitsForEmptyEventLoop: true,
    functionName,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:${LOCAL_REGION}:${LOCAL_ACCOUNT}:function:${functionName}`,
    memoryLimitInMB: String(memorySize),
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
