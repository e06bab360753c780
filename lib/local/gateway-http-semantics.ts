// The HTTP semantics of the local gateway's own answers, kept apart from its request plumbing:
// CORS headers on everything it answers itself (problems, documents, redirects), OPTIONS with
// `Allow` (and the CORS preflight headers for an allowed origin), and the public documents'
// GET/HEAD with a validator and 304. The deployed MOCK integrations answer the same
// (lib/api-documents.ts); the handlers' answers carry their own CORS headers (http-cors).
import type { IncomingMessage } from 'node:http';
import { contentTag } from '../../functions/shared/read-responses.ts';
import { ifNoneMatchFails, parseIfNoneMatch } from '../../functions/shared/preconditions.ts';
import { allowHeader, CORS_EXPOSED_HEADERS, CORS_REQUEST_HEADERS } from '../../functions/shared/routes.ts';

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

/**
 * OPTIONS on a resource with `methods` (RFC 9110 §9.3.7): 204 with `Allow`; to an allowed origin
 * also the preflight's answer, naming the same methods.
 */
export function optionsAnswer(request: Pick<IncomingMessage, 'headers'>, methods: readonly string[], allowedOrigins: ReadonlySet<string>): Answer {
  const allow = allowHeader(methods);
  const cors = corsHeaders(request, allowedOrigins);
  return {
    statusCode: 204,
    headers: {
      Allow: allow,
      ...(cors['Access-Control-Allow-Origin']
        ? {
            ...cors,
            'Access-Control-Allow-Methods': allow.replace(/ /g, ''),
            'Access-Control-Allow-Headers': CORS_REQUEST_HEADERS,
            'Access-Control-Max-Age': String(PREFLIGHT_MAX_AGE_SECONDS),
          }
        : {}),
    },
  };
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
