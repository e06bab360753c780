// What every GET and HEAD answer shares (RFC 9110, RFC 9111): a validator (the handler's ETag, or
// a strong one computed from the exact body), `If-Match` answered with 412 and `If-None-Match` with
// 304, caching headers that make a browser or kiosk revalidate instead of re-download, and HEAD as
// the GET without content. On every method, the precondition headers are checked first: a value
// outside their grammar is a 400, whatever the method.
import { createHash } from 'node:crypto';
import type { MiddlewareObj } from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { readOutcome, ReadPreconditionFailedError } from './preconditions.ts';
import { headerValue, withoutHeaders } from './header-lookup.ts';
import { conditionalHeaders } from './request-headers.ts';

/**
 * Authenticated content: `private` keeps it out of shared caches (RFC 9111 §5.2.2.7), `no-cache`
 * lets the client store it but makes it ask (If-None-Match) before each reuse (§5.2.2.4), so no
 * one ever sees a stale event, and an unchanged answer costs a 304 without a body.
 */
export const READ_CACHE_CONTROL = 'private, no-cache';
/** The answer depends on who asks (roles) and, with CORS, from which origin. */
export const READ_VARY = ['Authorization', 'Origin'];

/** A strong entity-tag of exact bytes: 128 bits of SHA-256, base64url (RFC 9110 §8.8.3: any octets but `"`). */
export function contentTag(body: string | Buffer): string {
  return `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"`;
}

type Headers = NonNullable<APIGatewayProxyResult['headers']>;

function header(headers: Headers, name: string): string | undefined {
  const value = headerValue(headers, name);
  return value === undefined ? undefined : String(value);
}

/** `Vary`: `names` first (one value whether or not http-cors added `Origin`), then any others once each. */
function varyWith(headers: Headers, names: readonly string[]): string {
  const present = (header(headers, 'Vary') ?? '')
    .split(',')
    .map((v) => v.trim())
    .filter(Boolean);
  const lower = new Set(names.map((name) => name.toLowerCase()));
  return [...names, ...present.filter((name) => !lower.has(name.toLowerCase()))].join(', ');
}

const isRead = (event: APIGatewayProxyEvent) => event.httpMethod === 'GET' || event.httpMethod === 'HEAD';

/**
 * Added before http-cors in the middy stack, so its `after` and `onError` run after CORS has
 * added its headers: a 304 keeps them, and HEAD drops only the content.
 */
export function readResponses(): MiddlewareObj<APIGatewayProxyEvent, APIGatewayProxyResult> {
  return {
    before: (request) => {
      conditionalHeaders(request.event); // a 400 for a malformed precondition, whatever the method
    },
    after: (request) => {
      const { event, response } = request;
      if (!isRead(event) || response?.statusCode !== 200) return;
      const headers = { ...response.headers };
      const etag = header(headers, 'ETag') ?? contentTag(response.body);
      const common = {
        ...withoutHeaders(headers, ['ETag', 'Cache-Control', 'Vary']),
        ETag: etag,
        'Cache-Control': READ_CACHE_CONTROL,
        Vary: varyWith(headers, READ_VARY),
      };
      const outcome = readOutcome(conditionalHeaders(event), etag);
      if (outcome === 'precondition-failed') {
        // Thrown, so that the onError middlewares make the problem (with the CORS headers) as for any other error.
        throw new ReadPreconditionFailedError(etag);
      }
      if (outcome === 'not-modified') {
        // 304: the headers a 200 would carry that describe the cached copy (RFC 9110 §15.4.5), no content.
        request.response = { statusCode: 304, headers: withoutHeaders(common, ['Content-Type', 'Content-Length']), body: '' };
      } else if (event.httpMethod === 'HEAD') {
        request.response = {
          statusCode: 200,
          headers: { ...common, 'Content-Length': String(Buffer.byteLength(response.body)) },
          body: '',
        };
      } else {
        request.response = { ...response, headers: common };
      }
    },
    onError: (request) => {
      // HEAD answers a problem with its status and headers only.
      if (request.event.httpMethod === 'HEAD' && request.response) request.response = { ...request.response, body: '' };
    },
  };
}
