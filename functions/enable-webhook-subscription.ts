// POST /webhook-subscriptions/{subscriptionId}/enable: a subscription its receiver disabled with
// a 410 receives again, from the next change on (replay what it missed).
import { tableStore } from './config.ts';
import { httpHandler, jsonResponse, type HttpHandler } from './http/http.ts';
import { noQueryParameters, validate } from './http/request-validation.ts';
import { callerOf, visibleSubscription } from './webhooks/webhook-access.ts';
import { SubscriptionPathParameters } from './webhooks/webhook-schema.ts';
import { SubscriptionsStore, subscriptionView } from './webhooks/subscriptions-store.ts';

const enableWebhookSubscription: HttpHandler = async (event, _context, { signal }) => {
  const { subscriptionId } = validate(SubscriptionPathParameters, event.pathParameters, 'subscription id');
  noQueryParameters(event);
  const store = tableStore(SubscriptionsStore, signal);
  const subscription = await visibleSubscription(store, subscriptionId, callerOf(event));
  await store.setEnabled(subscriptionId, true);
  const { disabledReason: _reason, ...rest } = subscription;
  return jsonResponse(200, subscriptionView({ ...rest, enabled: true }));
};

export const handler = httpHandler(enableWebhookSubscription);
