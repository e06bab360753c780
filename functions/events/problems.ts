// Problem details (RFC 9457): the catalogue of problems this API answers with, and the one
// mapping from errors to problems. The OpenAPI document and the gateway responses use the same
// catalogue.

export const PROBLEM_CONTENT_TYPE = 'application/problem+json';
export const PROBLEM_TYPE_BASE = 'https://museum.example/problems/';

export const PROBLEM_KINDS = {
  'validation-error': { status: 400, title: 'Invalid request' },
  'malformed-json': { status: 400, title: 'Malformed JSON body' },
  'malformed-request': { status: 400, title: 'Malformed HTTP request' },
  unauthorized: { status: 401, title: 'Unauthorized' },
  forbidden: { status: 403, title: 'Forbidden' },
  'not-found': { status: 404, title: 'Not found' },
  'method-not-allowed': { status: 405, title: 'Method not allowed' },
  conflict: { status: 409, title: 'Conflict' },
  'cursor-expired': { status: 410, title: 'Cursor expired' },
  'request-timeout': { status: 408, title: 'Request timeout' },
  'precondition-failed': { status: 412, title: 'Precondition failed' },
  'payload-too-large': { status: 413, title: 'Payload too large' },
  'unsupported-media-type': { status: 415, title: 'Unsupported media type' },
  'idempotency-key-reused': { status: 422, title: 'Idempotency key reused' },
  'webhook-url-refused': { status: 422, title: 'Webhook URL refused' },
  'subscription-limit': { status: 409, title: 'Subscription limit reached' },
  'too-many-requests': { status: 429, title: 'Too many requests' },
  'request-headers-too-large': { status: 431, title: 'Request header fields too large' },
  'internal-error': { status: 500, title: 'Internal server error' },
  'not-implemented': { status: 501, title: 'Not implemented' },
  'bad-gateway': { status: 502, title: 'Bad gateway' },
  'service-unavailable': { status: 503, title: 'Service unavailable' },
  'gateway-timeout': { status: 504, title: 'Gateway timeout' },
} as const;

export type ProblemKind = keyof typeof PROBLEM_KINDS;

/**
 * What the HTTP front end refuses before API Gateway sees a request (bad framing, oversized headers,
 * a method or transfer coding it does not implement, a request that never finished arriving). The
 * local run's HTTP server answers them with these problems (lib/local/http-server.ts); deployed,
 * AWS's front end answers them itself, so the OpenAPI document, which describes the API, leaves
 * them out.
 */
export const FRONT_END_KINDS: readonly ProblemKind[] = [
  'malformed-request',
  'request-timeout',
  'request-headers-too-large',
  'not-implemented',
];

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

/**
 * An error that knows its problem: the HTTP layer throws it for a bad request, and the store's
 * errors (functions/store/store-errors.ts) extend it with their kind fixed per class, so mapping
 * any of our errors is one `instanceof`. `message` is what the logs see; `detail` (by default the
 * message) is what the client reads.
 */
export class HttpProblem extends Error {
  override name = 'HttpProblem';
  readonly problem: Problem;
  readonly headers: Record<string, string>;
  constructor(
    kind: ProblemKind,
    message: string,
    options: { detail?: string; errors?: FieldError[]; headers?: Record<string, string> } = {},
  ) {
    super(message);
    this.problem = problemBody(kind, options.detail ?? message, options.errors);
    this.headers = options.headers ?? {};
  }
}

/** Seconds a client should wait before retrying a 503. */
export const RETRY_AFTER_SECONDS = 1;

export function retryAfter(seconds = RETRY_AFTER_SECONDS): Record<string, string> {
  return { 'Retry-After': String(seconds) };
}

/** What a 503 tells the client, whichever temporary failure caused it (the logs name the cause). */
export const STORE_UNAVAILABLE_DETAIL = 'The event store is temporarily unavailable; retry shortly';

// The one classification of errors that are not ours: those of the AWS SDK, Node's network stack
// and middy's early timeout that mean "DynamoDB is throttling, failing or unreachable right now",
// temporary conditions that a retry may cure. By name, code and the SDK's typed fields rather than
// by `instanceof`: this module stays free of the SDK (the OpenAPI generator loads it), and the
// timeouts of @smithy's HTTP handler, Node and middy are plain Errors that no class identifies.
const UNAVAILABLE_ERROR_NAMES = new Set([
  'ProvisionedThroughputExceededException',
  'ThrottlingException',
  'RequestLimitExceeded',
  'InternalServerError',
  'ServiceUnavailable',
  'TimeoutError',
  'RequestTimeout',
  'RequestTimeoutException',
]);
const UNAVAILABLE_ERROR_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EAI_AGAIN',
  'ENOTFOUND',
  'EHOSTUNREACH',
  'ENETUNREACH',
]);
const UNAVAILABLE_CANCELLATION_CODES = new Set(['ThrottlingError', 'ProvisionedThroughputExceeded', 'RequestLimitExceeded']);

function isTemporaryFailure(error: Error): boolean {
  const details = error as Error & {
    code?: string;
    $metadata?: { httpStatusCode?: number };
    CancellationReasons?: { Code?: string }[];
  };
  if (UNAVAILABLE_ERROR_NAMES.has(error.name)) return true;
  // Set by the store's DynamoDB client when no attempt of the call reached DynamoDB (functions/store/dynamodb-client.ts).
  if ((error as { $neverSent?: boolean }).$neverSent === true) return true;
  if (details.code && UNAVAILABLE_ERROR_CODES.has(details.code)) return true;
  if ((details.$metadata?.httpStatusCode ?? 0) >= 500) return true;
  if (error.name === 'TransactionCanceledException') {
    return (details.CancellationReasons ?? []).some((reason) => UNAVAILABLE_CANCELLATION_CODES.has(reason.Code ?? ''));
  }
  return false;
}

export interface ProblemAnswer {
  problem: Problem;
  headers: Record<string, string>;
  /** False for an error nobody anticipated: logged in full, answered with a 500 that says nothing internal. */
  expected: boolean;
}

/** The one error mapping: our errors carry their problem; a foreign one is a 503 if temporary, else a 500. */
export function toProblem(error: unknown): ProblemAnswer {
  if (error instanceof HttpProblem) return { problem: error.problem, headers: error.headers, expected: true };
  if (Error.isError(error) && isTemporaryFailure(error)) {
    return { problem: problemBody('service-unavailable', STORE_UNAVAILABLE_DETAIL), headers: retryAfter(), expected: true };
  }
  return {
    problem: problemBody('internal-error', 'An unexpected error occurred; it has been logged'),
    headers: {},
    expected: false,
  };
}
