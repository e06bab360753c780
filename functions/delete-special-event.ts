// DELETE /special-events/{eventId}
import { eventsStore } from './shared/config.ts';
import { EventPathParameters } from './shared/event-schema.ts';
import { emptyResponse, httpHandler, noQueryParameters, ifMatch, validate, type HttpHandler } from './shared/http.ts';
import { withIfMatch } from './shared/preconditions.ts';
import { metrics } from './shared/observability.ts';

const deleteSpecialEvent: HttpHandler = async (event, _context, { signal }) => {
  const { eventId } = validate(EventPathParameters, event.pathParameters, 'event id');
  noQueryParameters(event);
  const store = eventsStore(signal);
  await withIfMatch(
    ifMatch(event),
    async () => (await store.getEvent(eventId))?.version,
    (expectedVersion) => store.deleteEvent(eventId, expectedVersion),
  );
  metrics.addMetric('SpecialEventsDeleted', 'Count', 1);
  return emptyResponse(204);
};

export const handler = httpHandler(deleteSpecialEvent);
