// GET /webhook-subscriptions/{subscriptionId}/deliveries: the recent attempts, newest first.
import { tableStore } from './config.ts';
import { SubscriptionsStore } from './webhooks/subscriptions-store.ts';
import { httpHandler, jsonResponse, type HttpHandler } from './http/http.ts';
import { noQueryParameters, validate } from './http/request-validation.ts';
import { callerOf, visibleSubscription } from './webhooks/webhook-access.ts';
import { SubscriptionPathParameters } from './webhooks/webhook-schema.ts';

const listWebhookDeliveries: HttpHandler = async (event, _context, { signal }) => {
  const { subscriptionId } = validate(SubscriptionPathParameters, event.pathParameters, 'subscription id');
  noQueryParameters(event);
  const store = tableStore(SubscriptionsStore, signal);
  await visibleSubscription(store, subscriptionId, callerOf(event));
  return jsonResponse(200, { deliveries: await store.listAttempts(subscriptionId) });
};

export const handler = httpHandler(listWebhookDeliveries);
