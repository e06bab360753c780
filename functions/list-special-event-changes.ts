// GET /special-events/changes
import { encodeCursor, requestedWindow } from './changes/change-feed.ts';
import { tableStore } from './config.ts';
import { ChangeFeedReader } from './store/change-feed-reader.ts';
import { ListChangesQuery } from './events/event-schema.ts';
import { LIMITS } from './events/limits.ts';
import { httpHandler, jsonTextResponse, type HttpHandler } from './http/http.ts';
import { validateQuery } from './http/request-validation.ts';
import { metrics } from './observability.ts';

const listSpecialEventChanges: HttpHandler = async (event, _context, { signal }) => {
  const query = validateQuery(ListChangesQuery, event);
  const limit = query.limit ?? LIMITS.defaultChangesLimit;
  const window = requestedWindow(query.since, new Date());
  const page = await tableStore(ChangeFeedReader, signal).page(window, limit);
  metrics.addMetric('ChangesRead', 'Count', page.changes.length);
  const next = encodeCursor(page.next);
  // The changes as stored, byte for byte: the same text a webhook delivers.
  const body = `{"changes":[${page.changes.join(',')}],"next":${JSON.stringify(next)},"caughtUp":${String(page.caughtUp)}}`;
  return jsonTextResponse(200, body, { Link: `<?${new URLSearchParams({ since: next, limit: String(limit) }).toString()}>; rel="next"` });
};

export const handler = httpHandler(listSpecialEventChanges);
