// DELETE /special-events/{eventId}
import { eventsStore } from './config.ts';
import { EventPathParameters } from './events/event-schema.ts';
import { EARLY_TIMEOUT_MS, emptyResponse, httpHandler, type HttpHandler } from './http/http.ts';
import { noQueryParameters, validate } from './http/request-validation.ts';
import { idempotencyKey, preconditions } from './http/request-headers.ts';
import { preconditionsFingerprint, withPreconditions } from './http/preconditions.ts';
import { metrics } from './observability.ts';

// With an Idempotency-Key, a repeat of the same request by the same user within 24 hours gets the
// first answer (204) again, even once the event is gone; the same key with another request is a 422.
const deleteSpecialEvent: HttpHandler = async (event, context, { signal }) => {
  const { eventId } = validate(EventPathParameters, event.pathParameters, 'event id');
  noQueryParameters(event);
  const precondition = preconditions(event);
  const key = idempotencyKey(event);
  const principal: unknown = event.requestContext.authorizer?.principalId;
  if (key !== undefined && typeof principal !== 'string') throw new Error('The authorizer passed no principalId');
  const scope = key === undefined ? undefined : { principal: principal as string, key, request: { eventId, ...preconditionsFingerprint(precondition) } };
  const store = eventsStore(signal, Date.now() + context.getRemainingTimeInMillis() - EARLY_TIMEOUT_MS);
  await withPreconditions(
    precondition,
    async () => (await store.getEvent(eventId))?.version,
    (expectedVersion) => store.deleteEvent(eventId, expectedVersion, scope),
  );
  metrics.addMetric('SpecialEventsDeleted', 'Count', 1);
  return emptyResponse(204);
};

export const handler = httpHandler(deleteSpecialEvent);
