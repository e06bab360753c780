// DELETE /special-events/{eventId}
import { eventsStore } from './config.ts';
import { EventPathParameters } from './events/event-schema.ts';
import { emptyResponse, httpHandler, requestChecks, type HttpHandler } from './http/http.ts';
import { noQueryParameters, validate } from './http/request-validation.ts';
import { idempotencyKey, preconditions } from './http/request-headers.ts';
import { preconditionsFingerprint, withPreconditions } from './http/preconditions.ts';
import { metrics } from './observability.ts';

const request = requestChecks({
  path: (event) => validate(EventPathParameters, event.pathParameters, 'event id'),
  query: noQueryParameters,
  precondition: preconditions,
  key: idempotencyKey,
});

// With an Idempotency-Key, a repeat of the same request by the same user within 24 hours gets the
// first answer (204) again, even once the event is gone; the same key with another request is a 422.
const deleteSpecialEvent: HttpHandler = async (event, _context, { signal, deadline, principal }) => {
  const {
    path: { eventId },
    precondition,
    key,
  } = request.of(event);
  const scope =
    key === undefined ? undefined : { principal: principal(), key, request: { eventId, ...preconditionsFingerprint(precondition) } };
  const store = eventsStore(signal, deadline);
  await withPreconditions(
    precondition,
    async () => (await store.getEvent(eventId))?.version,
    (expectedVersion) => store.deleteEvent(eventId, expectedVersion, scope),
  );
  metrics.addMetric('SpecialEventsDeleted', 'Count', 1);
  return emptyResponse(204);
};

export const handler = httpHandler(deleteSpecialEvent, request);
