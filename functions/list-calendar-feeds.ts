// GET /calendar-feeds: the caller's own feeds (an editor's too: feeds are personal), never a token.
import type { FeedView } from './calendar/feed-schema.ts';
import { tableStore } from './config.ts';
import { CalendarFeedsStore } from './calendar/feed-store.ts';
import { httpHandler, jsonResponse, type HttpHandler } from './http/http.ts';
import { noQueryParameters } from './http/request-validation.ts';
import { callerOf } from './webhooks/webhook-access.ts';

const listCalendarFeeds: HttpHandler = async (event, _context, { signal }) => {
  noQueryParameters(event);
  const feeds = await tableStore(CalendarFeedsStore, signal).list(callerOf(event).username);
  const views: FeedView[] = feeds.map(({ id, label, createdAt }) => ({ id, ...(label === undefined ? {} : { label }), createdAt }));
  return jsonResponse(200, { feeds: views });
};

export const handler = httpHandler(listCalendarFeeds);
