// The HTTP edge shared by every handler: one middy stack (header normalisation, JSON body
// parsing, problem responses, logs and metrics) and one way to build responses. The request
// validation helpers, free of middy, are in request-validation.ts and request-headers.ts.
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { logMetrics } from '@aws-lambda-powertools/metrics/middleware';
import middy, { type MiddlewareObj } from '@middy/core';
import httpCors from '@middy/http-cors';
import httpHeaderNormalizer from '@middy/http-header-normalizer';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { LIMITS } from '../events/limits.ts';
import { logger, metrics } from '../observability.ts';
import { CORS_EXPOSED_HEADERS, CORS_REQUEST_HEADERS } from '../routes.ts';
import { readResponses } from './read-responses.ts';
import { headerValue } from './header-lookup.ts';
import { decodeUtf8, parseJsonObject } from './json-text.ts';
import { refuseMethodOverride } from './method-override.ts';
import { requireJsonContentType } from './request-headers.ts';
import { HttpProblem, PROBLEM_CONTENT_TYPE, toProblem, type Problem } from '../events/problems.ts';

/** An API Gateway proxy event after the middleware: headers lower-cased, JSON body parsed. */
export type HttpEvent = Omit<APIGatewayProxyEvent, 'body'> & { body: unknown };
/**
 * An operation. `signal` aborts when the invocation is about to time out (middy's early
 * timeout): passed to every DynamoDB call, it stops a call or a retry from outliving the
 * answer, so no write lands after the client was told 503. `deadline` (epoch ms) is when it
 * aborts; `principal()` is the caller the authorizer verified (an error if it passed none).
 */
export type HttpHandler = (event: HttpEvent, context: Context, options: InvocationOptions) => Promise<APIGatewayProxyResult>;

export interface InvocationOptions {
  signal: AbortSignal;
  deadline: number | undefined;
  principal: () => string;
}

/** Time kept back from the Lambda timeout to answer 503 (and flush logs and metrics) instead of timing out. */
export const EARLY_TIMEOUT_MS = 1_000;

/** Sent on every response: a JSON API has nothing for a browser to sniff or a cache to keep. */
const STANDARD_HEADERS = { 'X-Content-Type-Options': 'nosniff', 'Cache-Control': 'no-store' };

export function jsonResponse(statusCode: number, body: unknown, headers: Record<string, string> = {}): APIGatewayProxyResult {
  return jsonTextResponse(statusCode, JSON.stringify(body), headers);
}

/** A JSON answer whose text is already made (parts of it stored as JSON text, served as they are). */
export function jsonTextResponse(statusCode: number, text: string, headers: Record<string, string> = {}): APIGatewayProxyResult {
  return { statusCode, headers: { ...STANDARD_HEADERS, 'Content-Type': 'application/json', ...headers }, body: text };
}

export function emptyResponse(statusCode: 204, headers: Record<string, string> = {}): APIGatewayProxyResult {
  return { statusCode, headers: { ...STANDARD_HEADERS, ...headers }, body: '' };
}

export function problemResponse(problem: Problem, headers: Record<string, string> = {}): APIGatewayProxyResult {
  return {
    statusCode: problem.status,
    headers: { ...STANDARD_HEADERS, 'Content-Type': PROBLEM_CONTENT_TYPE, ...headers },
    body: JSON.stringify(problem),
  };
}

/**
 * Written here rather than taken from @middy/http-json-body-parser: our contract answers
 * malformed JSON with 400 (not 422), an oversized body with 413, a content coding with 415 and
 * every error as problem+json; the body limit is checked before parsing, and the bytes are
 * decoded as strict UTF-8 (the parser's Buffer decoding would turn bad bytes into U+FFFD).
 */
export function jsonRequestBody(): MiddlewareObj<APIGatewayProxyEvent> {
  return {
    before: (request) => {
      const event = request.event;
      const raw = event.body ?? '';
      const bytes = event.isBase64Encoded ? Buffer.from(raw, 'base64') : Buffer.from(raw, 'utf8');
      if (bytes.length > LIMITS.maxBodyBytes) {
        throw new HttpProblem(
          'payload-too-large',
          `The request body is ${bytes.length} bytes; at most ${LIMITS.maxBodyBytes} are accepted`,
        );
      }
      // Every Content-Encoding line and every coding in each: `gzip` then `identity` on two lines
      // is a gzip body, not an identity one (the single-value header holds only the last line). Both
      // lists are looked up as every header is (header-lookup.ts); either may be absent at runtime.
      const codings = [headerValue(event.headers, 'content-encoding'), ...(headerValue(event.multiValueHeaders, 'content-encoding') ?? [])]
        .flatMap((value) => (value ?? '').split(','))
        .map((coding) => coding.trim().toLowerCase())
        .filter((coding) => coding !== '');
      const contentEncoding = codings.find((coding) => coding !== 'identity') ?? '';
      if (contentEncoding !== '') {
        // RFC 9110 §15.5.16 and §12.5.3: an unsupported content coding is a 415 that names the accepted ones.
        throw new HttpProblem('unsupported-media-type', `Content-Encoding ${contentEncoding} is not supported; send the body as it is`, {
          headers: { 'Accept-Encoding': 'identity' },
        });
      }
      requireJsonContentType(event);
      // A base64 body is the client's bytes; a text body was decoded by the gateway, which may
      // already have replaced bytes that were not UTF-8 by U+FFFD: refused as well (README).
      const text = event.isBase64Encoded ? decodeUtf8(bytes) : raw;
      if (text === undefined) throw new HttpProblem('malformed-json', 'The request body is not valid UTF-8');
      (event as { body: unknown }).body = parseJsonObject(text);
    },
  };
}

/**
 * The checks of one operation's request (path, query, headers, body), run by the edge before the
 * operation, in the order given; each returns the part it validated, which the operation reads
 * with `of(event)`. Preconditions (If-Match, If-None-Match) are evaluated only by the operation,
 * or for reads after it (read-responses.ts), so always after these checks: RFC 9110 §13.2.1 has a
 * server evaluate them only when its answer without them would be 2xx or 412, so a request that
 * fails a check gets the same 4xx with or without preconditions, on every method.
 */
export function requestChecks<const Checks extends Record<string, (event: HttpEvent) => unknown>>(checks: Checks) {
  type Checked = { [Name in keyof Checks]: ReturnType<Checks[Name]> };
  const checked = new WeakMap<object, Checked>();
  const middleware: MiddlewareObj<APIGatewayProxyEvent> & { of(event: HttpEvent): Checked } = {
    before: ({ event }) => {
      const parts: Record<string, unknown> = {};
      for (const [name, check] of Object.entries(checks)) parts[name] = check(event);
      checked.set(event, parts as Checked);
    },
    of: (event) => {
      const parts = checked.get(event);
      if (parts === undefined) throw new Error('requestChecks was not passed to httpHandler for this operation');
      return parts;
    },
  };
  return middleware;
}

/** Turns every error into a problem response, logging the unexpected ones (never the request headers). */
function problemResponses(): MiddlewareObj<APIGatewayProxyEvent, APIGatewayProxyResult> {
  return {
    onError: (request) => {
      const { problem, headers, expected } = toProblem(request.error);
      if (!expected) logger.error('Unhandled error', request.error as Error);
      else if (problem.status >= 500)
        logger.warn('Temporary failure', {
          problem: problem.title,
          error: (request.error as Error).name,
          message: (request.error as Error).message,
        });
      metrics.addMetric(problem.status >= 500 ? 'ServerProblems' : 'ClientProblems', 'Count', 1);
      // Set, not returned: the remaining onError middlewares (logs, metrics, CORS) still run.
      request.response = problemResponse(problem, headers);
    },
  };
}

function corsOrigins(): string[] {
  return (process.env.CORS_ALLOWED_ORIGINS ?? '')
    .split(',')
    .map((origin) => origin.trim())
    .filter(Boolean);
}

/**
 * Wraps an operation in the shared middleware stack, then `requestMiddlewares`. Several DynamoDB calls in a row (each
 * bounded by the client's timeouts) could add up past the Lambda timeout: middy's early timeout
 * ends the operation EARLY_TIMEOUT_MS before it with a TimeoutError, answered as a 503 problem.
 */
export function httpHandler(operation: HttpHandler, ...requestMiddlewares: MiddlewareObj<APIGatewayProxyEvent>[]) {
  // middy runs `after` and `onError` in the reverse order of `use`: problemResponses makes the
  // answer first, then http-cors adds its headers to it (a browser can read every problem), then
  // readResponses turns a GET into a 304 or a HEAD, keeping the CORS headers.
  const handler = middy<APIGatewayProxyEvent, APIGatewayProxyResult>({ timeoutEarlyInMillis: EARLY_TIMEOUT_MS })
    .use(injectLambdaContext(logger, { resetKeys: true, logEvent: false }))
    .use(logMetrics(metrics))
    .use(httpHeaderNormalizer())
    .use(readResponses());
  const origins = corsOrigins();
  if (origins.length > 0) {
    handler.use(httpCors({ origins, headers: CORS_REQUEST_HEADERS, exposeHeaders: CORS_EXPOSED_HEADERS }));
  }
  handler.use(problemResponses());
  handler.use(refuseMethodOverride());
  // Passed in by the operations with a body (jsonRequestBody), so the others' bundles leave it out.
  for (const middleware of requestMiddlewares) handler.use(middleware);
  return handler.handler((event, context, { signal }) =>
    operation(event as HttpEvent, context, {
      signal,
      deadline:
        typeof context.getRemainingTimeInMillis === 'function'
          ? Date.now() + context.getRemainingTimeInMillis() - EARLY_TIMEOUT_MS
          : undefined,
      principal: () => {
        const principal: unknown = event.requestContext.authorizer?.principalId;
        if (typeof principal !== 'string') throw new Error('The authorizer passed no principalId');
        return principal;
      },
    }),
  );
}

/** Strong ETag from the stored version: `"3"`. */
export function etag(version: number): string {
  return `"${version}"`;
}
