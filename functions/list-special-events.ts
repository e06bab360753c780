// GET /special-events
import { addDays, daysBetween, todayIn } from './shared/calendar-dates.ts';
import { eventsReader, museumTimeZone } from './shared/config.ts';
import { ListEventsQuery } from './shared/event-schema.ts';
import { LIMITS } from './shared/limits.ts';
import { httpHandler, jsonResponse, validateQuery, type HttpEvent, type HttpHandler } from './shared/http.ts';
import { metrics } from './shared/observability.ts';
import { HttpProblem } from './shared/problems.ts';

const listSpecialEvents: HttpHandler = async (event, _context, { signal }) => {
  const query = parseListQuery(event);
  const { events, consumedReadCapacity } = await eventsReader(signal).listEvents(query);
  metrics.addMetric('ListConsumedReadCapacity', 'Count', consumedReadCapacity);
  return jsonResponse(200, events);
};

/** Validates the query string and applies the defaults: today (museum time zone) + 7 days (at most 9999-12-31), page 1, limit 10. */
export function parseListQuery(event: Pick<HttpEvent, 'queryStringParameters' | 'multiValueQueryStringParameters'>, now = new Date()) {
  const query = validateQuery(ListEventsQuery, event);
  const startDate = query.startDate ?? todayIn(museumTimeZone(), now);
  // Near the end of the calendar the default range is shorter: addDays stops at 9999-12-31.
  const endDate = query.endDate ?? addDays(startDate, LIMITS.defaultRangeDays);
  const rangeDays = daysBetween(startDate, endDate);
  if (rangeDays < 0) throw rangeProblem('endDate', `must not be before startDate (${startDate})`);
  if (rangeDays > LIMITS.maxRangeDays) throw rangeProblem('endDate', `must be at most ${LIMITS.maxRangeDays} days after startDate (${startDate})`);
  return { startDate, endDate, page: query.page ?? 1, limit: query.limit ?? LIMITS.defaultListLimit };
}

function rangeProblem(field: string, message: string): HttpProblem {
  return new HttpProblem('validation-error', `The query string is invalid: ${field} ${message}`, { errors: [{ field, message }] });
}

export const handler = httpHandler(listSpecialEvents);
