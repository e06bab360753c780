// GET /calendar.ics?token=…: a feed's calendar, without credentials (API Gateway authorization
// NONE): the token is the credential. Every bad token is the same 404. Counted per feed before any
// other read (429 over CALENDAR_FEEDS.requestsPerWindow); the ETag and 304 come from the shared
// read edge (http/read-responses.ts), computed from the exact bytes, which the same state repeats.
import { credentialKeys } from './auth/credential-keys.ts';
import { CALENDAR_FEEDS, UnknownFeedTokenError } from './calendar/feed-rules.ts';
import { feedEntries } from './calendar/feed-entries.ts';
import { FeedQuery } from './calendar/feed-schema.ts';
import { CalendarFeedsStore } from './calendar/feed-store.ts';
import { candidateTokenHashes } from './calendar/feed-tokens.ts';
import { apiBaseUrl, eventUrl } from './calendar/feed-urls.ts';
import { CALENDAR_CONTENT_TYPE, renderCalendar } from './calendar/ics.ts';
import { recentChanges } from './calendar/recent-changes.ts';
import { museumTimeZone, tableStore } from './config.ts';
import { addDays, todayIn } from './events/calendar-dates.ts';
import { httpHandler, type HttpHandler } from './http/http.ts';
import { validateQuery } from './http/request-validation.ts';
import { metrics } from './observability.ts';
import { requiredEnv } from './environment.ts';
import { ChangeFeedReader } from './store/change-feed-reader.ts';
import { EventsReader } from './store/month-index-reader.ts';

const getCalendarFeed: HttpHandler = async (event, _context, { signal }) => {
  const { token } = validateQuery(FeedQuery, event);
  const hashes = candidateTokenHashes(token, await credentialKeys(requiredEnv('CREDENTIAL_KEYS_SECRET')));
  const feeds = tableStore(CalendarFeedsStore, signal);
  const feed = hashes.length > 0 ? await feeds.findByTokenHash(hashes) : undefined;
  if (!feed) throw new UnknownFeedTokenError();
  await feeds.countRequest(feed);

  const now = new Date();
  const today = todayIn(museumTimeZone(), now);
  const lastDate = addDays(today, CALENDAR_FEEDS.horizonDays);
  const [upcoming, changes] = await Promise.all([
    tableStore(EventsReader, signal).listEvents({ startDate: today, endDate: lastDate, page: 1, limit: CALENDAR_FEEDS.maxEvents }),
    recentChanges(tableStore(ChangeFeedReader, signal), now),
  ]);
  const entries = feedEntries(upcoming.stored, changes, { today, lastDate });
  metrics.addMetric('CalendarFeedsServed', 'Count', 1);
  const baseUrl = apiBaseUrl(event, '/calendar.ics');
  return {
    statusCode: 200,
    headers: { 'Content-Type': CALENDAR_CONTENT_TYPE, 'X-Content-Type-Options': 'nosniff' },
    body: renderCalendar(entries, (eventId) => eventUrl(baseUrl, eventId)),
  };
};

export const handler = httpHandler(getCalendarFeed);
