// DELETE /calendar-feeds/{feedId}: revokes one of the caller's feeds; its address answers 404 from then on.
import { FeedPathParameters } from './calendar/feed-schema.ts';
import { tableStore } from './config.ts';
import { CalendarFeedsStore } from './calendar/feed-store.ts';
import { emptyResponse, httpHandler, type HttpHandler } from './http/http.ts';
import { noQueryParameters, validate } from './http/request-validation.ts';
import { callerOf } from './webhooks/webhook-access.ts';

const deleteCalendarFeed: HttpHandler = async (event, _context, { signal }) => {
  const { feedId } = validate(FeedPathParameters, event.pathParameters, 'calendar feed id');
  noQueryParameters(event);
  await tableStore(CalendarFeedsStore, signal).delete(callerOf(event).username, feedId);
  return emptyResponse(204);
};

export const handler = httpHandler(deleteCalendarFeed);
