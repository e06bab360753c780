// GET /special-events/{eventId}
import { eventsStore } from './config.ts';
import { EventNotFoundError } from './store/events-store.ts';
import { EventPathParameters } from './events/event-schema.ts';
import { metrics } from './observability.ts';
import { etag, httpHandler, jsonResponse, requestChecks, type HttpHandler } from './http/http.ts';
import { noQueryParameters, validate } from './http/request-validation.ts';

const request = requestChecks({
  path: (event) => validate(EventPathParameters, event.pathParameters, 'event id'),
  query: noQueryParameters,
});

// Its preconditions are evaluated on its 200 by read-responses.ts, after the operation.
const getSpecialEvent: HttpHandler = async (event, _context, { signal }) => {
  const {
    path: { eventId },
  } = request.of(event);
  const stored = await eventsStore(signal).getEvent(eventId);
  if (!stored) throw new EventNotFoundError(eventId);
  metrics.addMetric('SpecialEventsRead', 'Count', 1);
  return jsonResponse(200, stored.event, { ETag: etag(stored.version) });
};

export const handler = httpHandler(getSpecialEvent, request);
