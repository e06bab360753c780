// PATCH /special-events/{eventId}
import { eventsStore } from './shared/config.ts';
import { EventPathParameters, UpdateEventRequest } from './shared/event-schema.ts';
import { etag, expectedVersion, httpHandler, jsonResponse, validate, type HttpHandler } from './shared/http.ts';
import { metrics } from './shared/observability.ts';

const updateSpecialEvent: HttpHandler = async (event, _context, { signal }) => {
  const { eventId } = validate(EventPathParameters, event.pathParameters, 'event id');
  const changes = validate(UpdateEventRequest, event.body, 'request body');
  const updated = await eventsStore(signal).updateEvent(eventId, changes, expectedVersion(event));
  metrics.addMetric('SpecialEventsUpdated', 'Count', 1);
  return jsonResponse(200, updated.event, { ETag: etag(updated.version) });
};

export const handler = httpHandler(updateSpecialEvent);
