// POST /calendar-feeds: a new secret address for the caller's calendar app. The token is in this
// answer only; the table keeps its keyed hash (functions/calendar/feed-tokens.ts).
import { credentialKeys } from './auth/credential-keys.ts';
import { newFeedId, newFeedToken } from './calendar/feed-rules.ts';
import { CreateFeedRequest, type CreatedFeed } from './calendar/feed-schema.ts';
import { feedTokenHash } from './calendar/feed-tokens.ts';
import { apiBaseUrl, subscribeUrl } from './calendar/feed-urls.ts';
import { tableStore } from './config.ts';
import { CalendarFeedsStore } from './calendar/feed-store.ts';
import { httpHandler, jsonRequestBody, jsonResponse, type HttpHandler } from './http/http.ts';
import { noQueryParameters, validate } from './http/request-validation.ts';
import { metrics } from './observability.ts';
import { requiredEnv } from './environment.ts';
import { callerOf } from './webhooks/webhook-access.ts';

const createCalendarFeed: HttpHandler = async (event, _context, { signal }) => {
  noQueryParameters(event);
  const owner = callerOf(event).username;
  const input = validate(CreateFeedRequest, event.body, 'request body');
  const token = newFeedToken();
  const feed = {
    id: newFeedId(),
    owner,
    ...(input.label === undefined ? {} : { label: input.label }),
    createdAt: new Date().toISOString(),
    tokenHash: feedTokenHash(token, await credentialKeys(requiredEnv('CREDENTIAL_KEYS_SECRET'))),
  };
  await tableStore(CalendarFeedsStore, signal).create(feed);
  metrics.addMetric('CalendarFeedsCreated', 'Count', 1);
  const { id, label, createdAt } = feed;
  const created: CreatedFeed = {
    id,
    ...(label === undefined ? {} : { label }),
    createdAt,
    url: subscribeUrl(apiBaseUrl(event, '/calendar-feeds'), token),
  };
  return jsonResponse(201, created, { Location: `${event.requestContext.path.replace(/\/$/, '')}/${id}` });
};

export const handler = httpHandler(createCalendarFeed, jsonRequestBody());
