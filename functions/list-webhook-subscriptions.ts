// GET /webhook-subscriptions: the caller's own, or every one for an editor.
import { tableStore } from './config.ts';
import { httpHandler, jsonResponse, type HttpHandler } from './http/http.ts';
import { noQueryParameters } from './http/request-validation.ts';
import { callerOf, seesAll } from './webhooks/webhook-access.ts';
import { SubscriptionsStore, subscriptionView } from './webhooks/subscriptions-store.ts';

const listWebhookSubscriptions: HttpHandler = async (event, _context, { signal }) => {
  noQueryParameters(event);
  const caller = callerOf(event);
  const subscriptions = await tableStore(SubscriptionsStore, signal).list(seesAll(caller) ? undefined : caller.username);
  return jsonResponse(200, { subscriptions: subscriptions.map(subscriptionView) });
};

export const handler = httpHandler(listWebhookSubscriptions);
