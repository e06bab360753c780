// DELETE /special-events/{eventId}
import { eventsStore } from './shared/config.ts';
import { EventPathParameters } from './shared/event-schema.ts';
import { emptyResponse, expectedVersion, httpHandler, validate, type HttpHandler } from './shared/http.ts';
import { metrics } from './shared/observability.ts';

const deleteSpecialEvent: HttpHandler = async (event, _context, { signal }) => {
  const { eventId } = validate(EventPathParameters, event.pathParameters, 'event id');
  await eventsStore(signal).deleteEvent(eventId, expectedVersion(event));
  metrics.addMetric('SpecialEventsDeleted', 'Count', 1);
  return emptyResponse(204);
};

export const handler = httpHandler(deleteSpecialEvent);
