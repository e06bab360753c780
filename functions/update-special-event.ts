// PATCH /special-events/{eventId}
import { eventsStore } from './config.ts';
import { EventPathParameters, UpdateEventRequest } from './events/event-schema.ts';
import { etag, httpHandler, jsonRequestBody, jsonResponse, requestChecks, type HttpHandler } from './http/http.ts';
import { noQueryParameters, validate } from './http/request-validation.ts';
import { idempotencyKey, preconditions } from './http/request-headers.ts';
import { preconditionsFingerprint, withPreconditions } from './http/preconditions.ts';
import { metrics } from './observability.ts';

const request = requestChecks({
  path: (event) => validate(EventPathParameters, event.pathParameters, 'event id'),
  query: noQueryParameters,
  precondition: preconditions,
  key: idempotencyKey,
  changes: (event) => validate(UpdateEventRequest, event.body, 'request body'),
});

// With an Idempotency-Key, a repeat of the same request (event, body and If-Match) by the same
// user within 24 hours gets the first answer again; the same key with another request is a 422.
const updateSpecialEvent: HttpHandler = async (event, _context, { signal, deadline, principal }) => {
  const {
    path: { eventId },
    precondition,
    key,
    changes,
  } = request.of(event);
  const scope =
    key === undefined
      ? undefined
      : { principal: principal(), key, request: { eventId, changes, ...preconditionsFingerprint(precondition) } };
  const store = eventsStore(signal, deadline);
  const updated = await withPreconditions(
    precondition,
    async () => (await store.getEvent(eventId))?.version,
    (expectedVersion) => store.updateEvent(eventId, changes, expectedVersion, scope),
  );
  metrics.addMetric('SpecialEventsUpdated', 'Count', 1);
  return jsonResponse(200, updated.event, { ETag: etag(updated.version) });
};

export const handler = httpHandler(updateSpecialEvent, jsonRequestBody(), request);
