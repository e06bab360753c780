// The two representations of special events a read answers with, chosen by Accept
// (content-negotiation.ts): the API's JSON, and schema.org JSON-LD (functions/events/json-ld.ts)
// where the deployment names its museum (museumSettings() in functions/config.ts). A JSON answer is the same bytes as
// before negotiation existed, with `Vary: Accept` added.
import type { APIGatewayProxyResult } from 'aws-lambda';
import type { MuseumSettings } from '../events/museum-settings.ts';
import { eventReadOffers, JSON_LD_CONTENT_TYPE, JSON_LD_OFFER, negotiate, VARY_ACCEPT } from './content-negotiation.ts';
import { jsonResponse, type HttpEvent } from './http.ts';

export type EventRepresentation = { kind: 'json' } | { kind: 'json-ld'; museum: MuseumSettings };

/** What `event` asks for among what a deployment with `museum` (or none) offers; a 406 problem when it accepts none. */
export function eventRepresentation(
  event: Pick<HttpEvent, 'headers' | 'multiValueHeaders'>,
  museum: MuseumSettings | undefined,
): EventRepresentation {
  const chosen = negotiate(event, eventReadOffers(museum !== undefined));
  return chosen === JSON_LD_OFFER && museum ? { kind: 'json-ld', museum } : { kind: 'json' };
}

/** A negotiated JSON answer: the body and headers as always, and `Vary: Accept`. */
export function negotiatedJsonResponse(body: unknown, headers: Record<string, string> = {}): APIGatewayProxyResult {
  return jsonResponse(200, body, { ...headers, ...VARY_ACCEPT });
}

/**
 * A JSON-LD answer. No ETag of its own: read-responses.ts gives it the strong tag of its exact
 * bytes, which differs from the JSON answer's (a version number or another body's hash), as two
 * representations' strong tags must (RFC 9110 §8.8.3); its bytes also change with the museum's settings.
 */
export function jsonLdResponse(document: unknown, headers: Record<string, string> = {}): APIGatewayProxyResult {
  return jsonResponse(200, document, { ...headers, 'Content-Type': JSON_LD_CONTENT_TYPE, ...VARY_ACCEPT });
}
