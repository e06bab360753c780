// GET /special-events/{eventId}
import { eventsStore } from './shared/config.ts';
import { EventNotFoundError } from './shared/events-store.ts';
import { EventPathParameters } from './shared/event-schema.ts';
import { metrics } from './shared/observability.ts';
import { etag, httpHandler, noQueryParameters, jsonResponse, validate, type HttpHandler } from './shared/http.ts';

const getSpecialEvent: HttpHandler = async (event, _context, { signal }) => {
  const { eventId } = validate(EventPathParameters, event.pathParameters, 'event id');
  noQueryParameters(event);
  const stored = await eventsStore(signal).getEvent(eventId);
  if (!stored) throw new EventNotFoundError(eventId);
  metrics.addMetric('SpecialEventsRead', 'Count', 1);
  return jsonResponse(200, stored.event, { ETag: etag(stored.version) });
};

export const handler = httpHandler(getSpecialEvent);
