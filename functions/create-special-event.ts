// POST /special-events
import { eventsStore } from './config.ts';
import { CreateEventRequest } from './events/event-schema.ts';
import { EARLY_TIMEOUT_MS, etag, httpHandler, jsonRequestBody, jsonResponse, type HttpHandler } from './http/http.ts';
import { noQueryParameters, validate } from './http/request-validation.ts';
import { conditionalHeaders, idempotencyKey } from './http/request-headers.ts';
import { checkCollectionPreconditions } from './http/preconditions.ts';
import { metrics } from './observability.ts';

// With an Idempotency-Key, a retry by the same user within 24 hours gets the event the key
// created (same body, Location and ETag); the same key with another event is a 422 problem.
// Without the header, every request creates an event.
const createSpecialEvent: HttpHandler = async (event, context, { signal }) => {
  noQueryParameters(event);
  checkCollectionPreconditions(conditionalHeaders(event));
  const key = idempotencyKey(event);
  const input = validate(CreateEventRequest, event.body, 'request body');
  const principal: unknown = event.requestContext.authorizer?.principalId;
  if (key !== undefined && typeof principal !== 'string') throw new Error('The authorizer passed no principalId');
  const { event: created, version } = await eventsStore(signal, Date.now() + context.getRemainingTimeInMillis() - EARLY_TIMEOUT_MS).createEvent(input, key === undefined ? undefined : { principal: principal as string, key });
  metrics.addMetric('SpecialEventsCreated', 'Count', 1);
  return jsonResponse(201, created, {
    Location: `${event.requestContext.path.replace(/\/$/, '')}/${created.eventId}`,
    ETag: etag(version),
  });
};

export const handler = httpHandler(createSpecialEvent, jsonRequestBody());
