// POST /special-events
import { eventsStore } from './config.ts';
import { CreateEventRequest } from './events/event-schema.ts';
import { etag, httpHandler, jsonRequestBody, jsonResponse, requestChecks, type HttpHandler } from './http/http.ts';
import { noQueryParameters, validate } from './http/request-validation.ts';
import { conditionalHeaders, idempotencyKey } from './http/request-headers.ts';
import { checkCollectionPreconditions } from './http/preconditions.ts';
import { metrics } from './observability.ts';

const request = requestChecks({
  query: noQueryParameters,
  conditions: conditionalHeaders,
  key: idempotencyKey,
  input: (event) => validate(CreateEventRequest, event.body, 'request body'),
});

// With an Idempotency-Key, a retry by the same user within 24 hours gets the event the key
// created (same body, Location and ETag); the same key with another event is a 422 problem.
// Without the header, every request creates an event.
const createSpecialEvent: HttpHandler = async (event, _context, { signal, deadline, principal }) => {
  const { conditions, key, input } = request.of(event);
  checkCollectionPreconditions(conditions);
  const { event: created, version } = await eventsStore(signal, deadline).createEvent(
    input,
    key === undefined ? undefined : { principal: principal(), key },
  );
  metrics.addMetric('SpecialEventsCreated', 'Count', 1);
  return jsonResponse(201, created, {
    Location: `${event.requestContext.path.replace(/\/$/, '')}/${created.eventId}`,
    ETag: etag(version),
  });
};

export const handler = httpHandler(createSpecialEvent, jsonRequestBody(), request);
