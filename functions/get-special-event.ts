// GET /special-events/{eventId}
import { eventsStore, museumSettings } from './config.ts';
import { EventNotFoundError } from './store/events-store.ts';
import { EventPathParameters } from './events/event-schema.ts';
import { eventDocument } from './events/json-ld.ts';
import { metrics } from './observability.ts';
import { eventRepresentation, jsonLdResponse, negotiatedJsonResponse } from './http/event-representations.ts';
import { etag, httpHandler, requestChecks, type HttpHandler } from './http/http.ts';
import { noQueryParameters, validate } from './http/request-validation.ts';

const request = requestChecks({
  path: (event) => validate(EventPathParameters, event.pathParameters, 'event id'),
  query: noQueryParameters,
  representation: (event) => eventRepresentation(event, museumSettings()),
});

// Its preconditions are evaluated on its 200 by read-responses.ts, after the operation.
const getSpecialEvent: HttpHandler = async (event, _context, { signal }) => {
  const {
    path: { eventId },
    representation,
  } = request.of(event);
  const stored = await eventsStore(signal).getEvent(eventId);
  if (!stored) throw new EventNotFoundError(eventId);
  metrics.addMetric('SpecialEventsRead', 'Count', 1);
  if (representation.kind === 'json-ld') return jsonLdResponse(eventDocument(stored.event, representation.museum));
  return negotiatedJsonResponse(stored.event, { ETag: etag(stored.version) });
};

export const handler = httpHandler(getSpecialEvent, request);
