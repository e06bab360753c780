// The HTTP semantics of the local gateway's own answers, kept apart from its request plumbing:
// CORS headers on everything it answers itself (problems, documents, redirects), OPTIONS with
// `Allow` (and the CORS preflight headers for an allowed origin), and the public documents'
// GET/HEAD with a validator and 304. The deployed MOCK integrations answer the same
// (lib/cdk/api-documents.ts); the handlers' answers carry their own CORS headers (http-cors).
import type { IncomingMessage } from 'node:http';
import { contentTag } from '../../functions/http/read-responses.ts';
import { ifNoneMatchFails, parseIfNoneMatch } from '../../functions/http/preconditions.ts';
import { allowHeader, CORS_ALLOWED_METHODS, CORS_EXPOSED_HEADERS, CORS_REQUEST_HEADERS } from '../../functions/routes.ts';

export interface Answer {
  statusCode: number;
  headers: Record<string, string>;
  body?: string | Buffer;
}

/** What the public documents answer: GET, HEAD, OPTIONS. */
export const DOCUMENT_METHODS = ['GET'] as const;

/** How long a browser may reuse a preflight answer. */
export const PREFLIGHT_MAX_AGE_SECONDS = 600;

/** The CORS headers of an answer to `request`, when its Origin is allowed; none otherwise. */
export function corsHeaders(request: Pick<IncomingMessage, 'headers'>, allowedOrigins: ReadonlySet<string>): Record<string, string> {
  const origin = request.headers.origin;
  if (!origin || !allowedOrigins.has(origin)) return {};
  return { 'Access-Control-Allow-Origin': origin, 'Access-Control-Expose-Headers': CORS_EXPOSED_HEADERS, Vary: 'Origin' };
}

/** The preflight's own headers (Fetch standard, CORS-preflight response), for an allowed Origin. */
function preflightHeaders(request: Pick<IncomingMessage, 'headers'>, allowedOrigins: ReadonlySet<string>): Record<string, string> {
  const cors = corsHeaders(request, allowedOrigins);
  if (!cors['Access-Control-Allow-Origin']) return {};
  return {
    ...cors,
    'Access-Control-Allow-Methods': CORS_ALLOWED_METHODS,
    'Access-Control-Allow-Headers': CORS_REQUEST_HEADERS,
    'Access-Control-Max-Age': String(PREFLIGHT_MAX_AGE_SECONDS),
  };
}

/**
 * OPTIONS on a resource with `methods` (RFC 9110 §9.3.7): 204 with `Allow`; to an allowed origin
 * also the preflight's answer.
 */
export function optionsAnswer(request: Pick<IncomingMessage, 'headers'>, methods: readonly string[], allowedOrigins: ReadonlySet<string>): Answer {
  return { statusCode: 204, headers: { Allow: allowHeader(methods), ...preflightHeaders(request, allowedOrigins) } };
}

/**
 * A CORS preflight from an allowed origin to a path the API does not have: 204, so that the page
 * may then read the 404 problem of its request (a failed preflight shows it only "Failed to fetch").
 * Undefined for anything else, which stays a 404.
 */
export function unknownPathPreflight(request: Pick<IncomingMessage, 'headers'>, allowedOrigins: ReadonlySet<string>): Answer | undefined {
  if (request.headers['access-control-request-method'] === undefined) return undefined;
  const headers = preflightHeaders(request, allowedOrigins);
  return headers['Access-Control-Allow-Origin'] ? { statusCode: 204, headers } : undefined;
}

/**
 * GET or HEAD of a public document: a strong ETag of its bytes, 304 when If-None-Match names it
 * (weak comparison; an invalid field is ignored, as a cache would), HEAD without content.
 */
export function documentAnswer(request: Pick<IncomingMessage, 'headers' | 'method'>, document: Answer & { body: string | Buffer }): Answer {
  const etag = contentTag(document.body);
  const headers: Record<string, string> = { ...document.headers, ETag: etag };
  const condition = request.headers['if-none-match'];
  if (condition !== undefined && ifNoneMatchFails(parseIfNoneMatch([condition]), etag)) {
    const { 'Content-Type': _type, ...rest } = headers;
    return { statusCode: 304, headers: rest };
  }
  if (request.method === 'HEAD') return { statusCode: 200, headers: { ...headers, 'Content-Length': String(Buffer.byteLength(document.body)) } };
  return { statusCode: 200, headers, body: document.body };
}
