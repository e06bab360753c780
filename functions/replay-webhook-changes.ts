// POST /webhook-subscriptions/{subscriptionId}/replay {"since": "<cursor>"}: queues the changes
// after the cursor (of the types the subscription takes) for delivery again, with their original
// ids, signed anew. At most MAX_REPLAYED changes per request: `next` continues where it stopped.
import { randomUUID } from 'node:crypto';
import { tableStore } from './config.ts';
import { SubscriptionsStore } from './webhooks/subscriptions-store.ts';
import { ChangeFeedReader } from './store/change-feed-reader.ts';
import { httpHandler, jsonRequestBody, jsonResponse, type HttpHandler } from './http/http.ts';
import { noQueryParameters, validate } from './http/request-validation.ts';
import { enqueueDeliveries } from './webhooks/delivery-queue.ts';
import { replayPage } from './webhooks/replay-page.ts';
import { callerOf, visibleSubscription } from './webhooks/webhook-access.ts';
import { ReplayRequest, SubscriptionPathParameters } from './webhooks/webhook-schema.ts';

/** Changes read per request: a few feed pages and SendMessageBatch calls, well within the 10 s timeout. */
export const MAX_REPLAYED = 1000;
const PAGE = 200;

const replayWebhookChanges: HttpHandler = async (event, _context, { signal }) => {
  const { subscriptionId } = validate(SubscriptionPathParameters, event.pathParameters, 'subscription id');
  noQueryParameters(event);
  const { since } = validate(ReplayRequest, event.body, 'request body');
  const subscription = await visibleSubscription(tableStore(SubscriptionsStore, signal), subscriptionId, callerOf(event));
  const reader = tableStore(ChangeFeedReader, signal);
  const replayId = randomUUID();
  let cursor = since;
  let read = 0;
  let queued = 0;
  let complete = false;
  while (read < MAX_REPLAYED) {
    const page = await replayPage(reader, cursor, Math.min(PAGE, MAX_REPLAYED - read));
    read += page.changes.length;
    const wanted = page.changes.filter((change) => subscription.types.includes(change.type));
    await enqueueDeliveries(
      wanted.map((change) => ({ subscriptionId, changeId: change.id, eventId: change.eventId, cloudEvent: change.cloudEvent })),
      replayId,
      signal,
    );
    queued += wanted.length;
    cursor = page.next;
    if (page.complete) {
      complete = true;
      break;
    }
  }
  return jsonResponse(202, { queued, next: cursor, complete });
};

export const handler = httpHandler(replayWebhookChanges, jsonRequestBody());
