// DELETE /webhook-subscriptions/{subscriptionId}: deliveries still queued for it are dropped.
import { tableStore } from './config.ts';
import { SubscriptionsStore } from './webhooks/subscriptions-store.ts';
import { emptyResponse, httpHandler, type HttpHandler } from './http/http.ts';
import { noQueryParameters, validate } from './http/request-validation.ts';
import { callerOf, visibleSubscription } from './webhooks/webhook-access.ts';
import { SubscriptionPathParameters } from './webhooks/webhook-schema.ts';

const deleteWebhookSubscription: HttpHandler = async (event, _context, { signal }) => {
  const { subscriptionId } = validate(SubscriptionPathParameters, event.pathParameters, 'subscription id');
  noQueryParameters(event);
  const store = tableStore(SubscriptionsStore, signal);
  await store.delete(await visibleSubscription(store, subscriptionId, callerOf(event)));
  return emptyResponse(204);
};

export const handler = httpHandler(deleteWebhookSubscription);
