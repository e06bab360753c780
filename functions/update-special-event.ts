// PATCH /special-events/{eventId}
import { eventsStore } from './shared/config.ts';
import { EventPathParameters, UpdateEventRequest } from './shared/event-schema.ts';
import { etag, httpHandler, noQueryParameters, jsonRequestBody, ifMatch, jsonResponse, validate, type HttpHandler } from './shared/http.ts';
import { withIfMatch } from './shared/preconditions.ts';
import { metrics } from './shared/observability.ts';

const updateSpecialEvent: HttpHandler = async (event, _context, { signal }) => {
  const { eventId } = validate(EventPathParameters, event.pathParameters, 'event id');
  noQueryParameters(event);
  const precondition = ifMatch(event);
  const changes = validate(UpdateEventRequest, event.body, 'request body');
  const store = eventsStore(signal);
  const updated = await withIfMatch(
    precondition,
    async () => (await store.getEvent(eventId))?.version,
    (expectedVersion) => store.updateEvent(eventId, changes, expectedVersion),
  );
  metrics.addMetric('SpecialEventsUpdated', 'Count', 1);
  return jsonResponse(200, updated.event, { ETag: etag(updated.version) });
};

export const handler = httpHandler(updateSpecialEvent, jsonRequestBody());
