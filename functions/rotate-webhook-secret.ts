// POST /webhook-subscriptions/{subscriptionId}/secret: a new secret, shown once; the one it
// replaces signs beside it for SECRET_OVERLAP_SECONDS, so a receiver can switch without a gap.
import { tableStore } from './config.ts';
import { httpHandler, jsonResponse, type HttpHandler } from './http/http.ts';
import { noQueryParameters, validate } from './http/request-validation.ts';
import { callerOf, visibleSubscription } from './webhooks/webhook-access.ts';
import { SubscriptionPathParameters } from './webhooks/webhook-schema.ts';
import { encryptSecret, generateSecret } from './webhooks/webhook-secrets.ts';
import { SECRET_OVERLAP_SECONDS, SubscriptionsStore } from './webhooks/subscriptions-store.ts';

const rotateWebhookSecret: HttpHandler = async (event, _context, { signal }) => {
  const { subscriptionId } = validate(SubscriptionPathParameters, event.pathParameters, 'subscription id');
  noQueryParameters(event);
  const store = tableStore(SubscriptionsStore, signal);
  const subscription = await visibleSubscription(store, subscriptionId, callerOf(event));
  const secret = generateSecret();
  const now = Math.floor(Date.now() / 1000);
  await store.rotateSecret(subscription, await encryptSecret(secret, subscriptionId, signal), now);
  return jsonResponse(200, {
    id: subscriptionId,
    secret,
    previousSecretExpiresAt: new Date((now + SECRET_OVERLAP_SECONDS) * 1000).toISOString(),
  });
};

export const handler = httpHandler(rotateWebhookSecret);
