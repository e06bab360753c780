// GET /webhook-subscriptions/{subscriptionId}
import { tableStore } from './config.ts';
import { httpHandler, jsonResponse, type HttpHandler } from './http/http.ts';
import { noQueryParameters, validate } from './http/request-validation.ts';
import { callerOf, visibleSubscription } from './webhooks/webhook-access.ts';
import { SubscriptionPathParameters } from './webhooks/webhook-schema.ts';
import { SubscriptionsStore, subscriptionView } from './webhooks/subscriptions-store.ts';

const getWebhookSubscription: HttpHandler = async (event, _context, { signal }) => {
  const { subscriptionId } = validate(SubscriptionPathParameters, event.pathParameters, 'subscription id');
  noQueryParameters(event);
  const subscription = await visibleSubscription(tableStore(SubscriptionsStore, signal), subscriptionId, callerOf(event));
  return jsonResponse(200, subscriptionView(subscription));
};

export const handler = httpHandler(getWebhookSubscription);
