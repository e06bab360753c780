// The two ways a local Lambda invocation fails, as Lambda's Invoke API reports them: refused for
// want of concurrency (TooManyRequestsException), or run and failed (FunctionError: Unhandled).
// https://docs.aws.amazon.com/lambda/latest/api/API_Invoke.html

/** Why Lambda refused an invocation (the `Reason` of Invoke's TooManyRequestsException). */
export type ThrottleReason = 'ReservedFunctionConcurrentInvocationLimitExceeded' | 'ConcurrentInvocationLimitExceeded';

/** Lambda refused the invocation (HTTP 429 TooManyRequestsException from Lambda's Invoke API): no concurrency was left for it. */
export class LambdaThrottledError extends Error {
  readonly reason: ThrottleReason;
  constructor(functionName: string, reason: ThrottleReason) {
    const pool = reason === 'ReservedFunctionConcurrentInvocationLimitExceeded' ? 'reserved' : "the account's unreserved";
    super(`Rate Exceeded. (${functionName}: ${pool} concurrency in use)`);
    this.name = 'TooManyRequestsException';
    this.reason = reason;
  }
}

/** The invocation ran and failed (FunctionError: Unhandled): the handler threw, timed out, answered too much, or its environment died. */
export class LambdaFunctionError extends Error {
  readonly errorType: string;
  readonly errorMessage: string;
  constructor(errorType: string, errorMessage: string) {
    super(errorMessage);
    this.name = 'LambdaFunctionError';
    this.errorType = errorType;
    this.errorMessage = errorMessage;
  }
}
