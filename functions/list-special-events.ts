// GET /special-events
import { addDays, daysBetween, todayIn } from './events/calendar-dates.ts';
import { museumSettings, museumTimeZone, tableStore } from './config.ts';
import { EventsReader } from './store/month-index-reader.ts';
import { ListEventsQuery } from './events/event-schema.ts';
import { LIMITS } from './events/limits.ts';
import { eventListDocument } from './events/json-ld.ts';
import { eventRepresentation, jsonLdResponse, negotiatedJsonResponse } from './http/event-representations.ts';
import { httpHandler, type HttpEvent, type HttpHandler } from './http/http.ts';
import { validateQuery } from './http/request-validation.ts';
import { metrics } from './observability.ts';
import { HttpProblem } from './events/problems.ts';

const listSpecialEvents: HttpHandler = async (event, _context, { signal }) => {
  const query = parseListQuery(event);
  const representation = eventRepresentation(event, museumSettings());
  const { events, hasMore, consumedReadCapacity } = await tableStore(EventsReader, signal).listEvents(query);
  metrics.addMetric('ListConsumedReadCapacity', 'Count', consumedReadCapacity);
  const headers = { Link: pageLinks(query, hasMore) };
  if (representation.kind === 'json-ld')
    return jsonLdResponse(eventListDocument(events, representation.museum, (query.page - 1) * query.limit + 1), headers);
  return negotiatedJsonResponse(events, headers);
};

type ListQuery = ReturnType<typeof parseListQuery>;

/**
 * RFC 8288 links to the neighbouring pages of the same window: `first`, `prev` after page 1,
 * `next` when an event follows this page (and the page cap allows it). Query-only references,
 * resolved against the request's own path, so they hold behind any base path or stage; the
 * window is written out, so `next` of a default list stays on today's window tomorrow too.
 */
export function pageLinks(query: ListQuery, hasMore: boolean): string {
  const link = (page: number, rel: string) =>
    `<?${new URLSearchParams({ startDate: query.startDate, endDate: query.endDate, page: String(page), limit: String(query.limit) }).toString()}>; rel="${rel}"`;
  return [
    link(1, 'first'),
    ...(query.page > 1 ? [link(query.page - 1, 'prev')] : []),
    ...(hasMore && query.page < LIMITS.maxListPage ? [link(query.page + 1, 'next')] : []),
  ].join(', ');
}

/** Validates the query string and applies the defaults: today (museum time zone) + 7 days (at most 9999-12-31), page 1, limit 10. */
export function parseListQuery(event: Pick<HttpEvent, 'queryStringParameters' | 'multiValueQueryStringParameters'>, now = new Date()) {
  const query = validateQuery(ListEventsQuery, event);
  const startDate = query.startDate ?? todayIn(museumTimeZone(), now);
  // Near the end of the calendar the default range is shorter: addDays stops at 9999-12-31.
  const endDate = query.endDate ?? addDays(startDate, LIMITS.defaultRangeDays);
  const rangeDays = daysBetween(startDate, endDate);
  if (rangeDays < 0) throw rangeProblem('endDate', `must not be before startDate (${startDate})`);
  if (rangeDays > LIMITS.maxRangeDays)
    throw rangeProblem('endDate', `must be at most ${LIMITS.maxRangeDays} days after startDate (${startDate})`);
  return { startDate, endDate, page: query.page ?? 1, limit: query.limit ?? LIMITS.defaultListLimit };
}

function rangeProblem(field: string, message: string): HttpProblem {
  return new HttpProblem('validation-error', `The query string is invalid: ${field} ${message}`, { errors: [{ field, message }] });
}

export const handler = httpHandler(listSpecialEvents);
