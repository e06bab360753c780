// Problem details (RFC 9457): the catalogue of problems this API answers with, and the one
// mapping from errors to problems. The OpenAPI document and the gateway responses use the same
// catalogue.

export const PROBLEM_CONTENT_TYPE = 'application/problem+json';
export const PROBLEM_TYPE_BASE = 'https://museum.example/problems/';

export const PROBLEM_KINDS = {
  'validation-error': { status: 400, title: 'Invalid request' },
  'malformed-json': { status: 400, title: 'Malformed JSON body' },
  unauthorized: { status: 401, title: 'Unauthorized' },
  forbidden: { status: 403, title: 'Forbidden' },
  'not-found': { status: 404, title: 'Not found' },
  'method-not-allowed': { status: 405, title: 'Method not allowed' },
  conflict: { status: 409, title: 'Conflict' },
  'precondition-failed': { status: 412, title: 'Precondition failed' },
  'payload-too-large': { status: 413, title: 'Payload too large' },
  'unsupported-media-type': { status: 415, title: 'Unsupported media type' },
  'idempotency-key-reused': { status: 422, title: 'Idempotency key reused' },
  'too-many-requests': { status: 429, title: 'Too many requests' },
  'internal-error': { status: 500, title: 'Internal server error' },
  'bad-gateway': { status: 502, title: 'Bad gateway' },
  'service-unavailable': { status: 503, title: 'Service unavailable' },
  'gateway-timeout': { status: 504, title: 'Gateway timeout' },
} as const;

export type ProblemKind = keyof typeof PROBLEM_KINDS;

export interface FieldError {
  /** Dotted path of the failing field, e.g. `dates.2`; empty for the whole body or query. */
  field: string;
  message: string;
}

export interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  errors?: FieldError[];
}

export function problemBody(kind: ProblemKind, detail: string, errors?: FieldError[]): Problem {
  const { status, title } = PROBLEM_KINDS[kind];
  return { type: `${PROBLEM_TYPE_BASE}${kind}`, title, status, detail, ...(errors ? { errors } : {}) };
}

/** An error that is already a problem: thrown by the HTTP layer, answered as it is. */
export class HttpProblem extends Error {
  override name = 'HttpProblem';
  readonly problem: Problem;
  readonly headers: Record<string, string>;
  constructor(kind: ProblemKind, detail: string, options: { errors?: FieldError[]; headers?: Record<string, string> } = {}) {
    super(detail);
    this.problem = problemBody(kind, detail, options.errors);
    this.headers = options.headers ?? {};
  }
}

/** Seconds a client should wait before retrying a 503. */
export const RETRY_AFTER_SECONDS = 1;

// Error names from the AWS SDK and Node's network stack that mean "DynamoDB is throttling,
// failing or unreachable right now": temporary conditions that a retry may cure.
const UNAVAILABLE_ERROR_NAMES = new Set([
  'ProvisionedThroughputExceededException',
  'ThrottlingException',
  'RequestLimitExceeded',
  'InternalServerError',
  'ServiceUnavailable',
  'TimeoutError',
  'RequestTimeout',
  'RequestTimeoutException',
  'StoreBusyError',
]);
const UNAVAILABLE_ERROR_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EAI_AGAIN']);

function isTemporaryFailure(error: Error): boolean {
  const details = error as Error & {
    code?: string;
    $metadata?: { httpStatusCode?: number };
    CancellationReasons?: { Code?: string }[];
  };
  if (UNAVAILABLE_ERROR_NAMES.has(error.name)) return true;
  if (details.code && UNAVAILABLE_ERROR_CODES.has(details.code)) return true;
  if ((details.$metadata?.httpStatusCode ?? 0) >= 500) return true;
  if (error.name === 'TransactionCanceledException') {
    return (details.CancellationReasons ?? []).some((reason) =>
      ['ThrottlingError', 'ProvisionedThroughputExceeded', 'RequestLimitExceeded'].includes(reason.Code ?? ''),
    );
  }
  return false;
}

/** The one error mapping. Anything not recognised is a 500 whose detail says nothing internal. */
export function toProblem(error: unknown): { problem: Problem; headers: Record<string, string>; expected: boolean } {
  if (error instanceof HttpProblem) return { problem: error.problem, headers: error.headers, expected: true };
  if (error instanceof Error) {
    switch (error.name) {
      case 'EventNotFoundError':
        return expected(problemBody('not-found', error.message));
      case 'EventVersionMismatchError':
        return expected(problemBody('precondition-failed', error.message));
      case 'ConcurrentModificationError':
        // The write did not commit and will not: a retry after Retry-After is safe.
        return {
          problem: problemBody('conflict', error.message),
          headers: { 'Retry-After': String((error as Error & { retryAfterSeconds?: number }).retryAfterSeconds ?? RETRY_AFTER_SECONDS) },
          expected: true,
        };
      case 'WriteOutcomeUnknownError':
        // Not a 503: the write may have applied. Read the event, or retry with the same Idempotency-Key.
        return expected(problemBody('gateway-timeout', `${error.message}: read the event, or retry with the same Idempotency-Key`));
      case 'IdempotencyKeyReusedError':
        return expected(problemBody('idempotency-key-reused', error.message));
    }
    if (isTemporaryFailure(error)) {
      return {
        problem: problemBody('service-unavailable', 'The event store is temporarily unavailable; retry shortly'),
        headers: { 'Retry-After': String(RETRY_AFTER_SECONDS) },
        expected: true,
      };
    }
  }
  return {
    problem: problemBody('internal-error', 'An unexpected error occurred; it has been logged'),
    headers: {},
    expected: false,
  };
}

function expected(problem: Problem) {
  return { problem, headers: {}, expected: true };
}
